import { Sandbox, Snapshot } from '@vercel/sandbox';
import { delay } from '../../lib/with-timeout.js';
import { ProviderBusyError } from '../provider-errors.js';
import type { VercelConnection } from './vercel-connection.js';

export interface SnapshotRequest {
  readonly connection: VercelConnection;
  readonly name: string;
  readonly expirationMs: number;
  readonly pollIntervalMs: number;
  readonly signal: AbortSignal;
}

/**
 * Snapshots the sandbox and waits until the snapshot is usable.
 *
 * `expirationMs` is passed as the SDK's `expiration` unchanged: both mean milliseconds and both
 * read `0` as "never expires" (provider contract in `sandbox-provider.ts`; reference §6: "`0` =
 * never expires", and `Snapshot.expiresAt` is then `undefined`).
 *
 * Taking a snapshot stops the session (reference §6); the sandbox status reads `snapshotting`
 * until the copy is done and `stopped` after. The snapshot is usable once its status is `created`
 * and the sandbox has left `snapshotting`; the next session call resumes the sandbox.
 */
export async function snapshotSandbox(request: SnapshotRequest): Promise<{ snapshotId: string; expiresAt: number | null }> {
  const { connection, name, signal } = request;
  const sandbox = await Sandbox.get({ ...connection, name, signal });
  const snapshot = await sandbox.snapshot({ expiration: request.expirationMs, signal });
  for (;;) {
    const current = await Snapshot.get({ ...connection, snapshotId: snapshot.snapshotId, signal });
    if (current.status !== 'created') {
      throw new ProviderBusyError('vercel', 'snapshot', `snapshot ended ${current.status}`, { context: { snapshotId: current.snapshotId, status: current.status } });
    }
    const owner = await Sandbox.get({ ...connection, name, signal });
    // What the provider says, not what was asked: a server that ignored `expiration: 0` shows here.
    if (owner.status !== 'snapshotting') return { snapshotId: snapshot.snapshotId, expiresAt: current.expiresAt?.getTime() ?? null };
    await delay(request.pollIntervalMs, signal);
  }
}
