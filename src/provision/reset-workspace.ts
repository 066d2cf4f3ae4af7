/**
 * `fleet workspace reset`: the only way to start a known workspace over. Under the workspace's
 * provision lock: the generation is bumped first (fencing out every live incarnation), the live
 * sandbox destroyed, the archive moved aside to `{archiveRoot}/.reset/{ws}-{time}` (kept, never
 * deleted here: an operator can still recover it), then every Redis record removed in one fenced
 * script (workspace-reset-store.ts). Moving the archive before the records go means a failure in
 * between leaves a conflict (records without their revisions), never a reset workspace that
 * quietly restores its old archive. The objects GC keeps marking format 2 records moved aside
 * (archive/reset-aside.ts): their objects and trees stay in the shared store.
 */
import { mkdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { resetAsidePath } from '../archive/reset-aside.js';
import { FleetError } from '../errors/fleet-error.js';
import { firstInvalidId } from '../providers/id-rules.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { BaseRegistry } from '../state/base-registry.js';
import type { SingleFlight } from '../locks/single-flight.js';
import type { Logger } from '../logger.js';
import type { FleetClient } from '../producers/fleet-client.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { Address, AddressStore } from '../state/address-store.js';
import type { RuntimeStore } from '../state/runtime-store.js';
import type { WorkspaceResetStore } from '../state/workspace-reset-store.js';

/** Thrown when the reset's generation moved, or its records kept changing, under it. Retried. */
export class ResetInterruptedError extends FleetError {
  readonly code = 'ResetInterrupted';
  readonly retryable = true;
}

export interface ResetDeps {
  readonly singleFlight: Pick<SingleFlight, 'using'>;
  readonly addresses: Pick<AddressStore, 'get' | 'bumpGeneration'>;
  readonly runtime: Pick<RuntimeStore, 'get'>;
  readonly archive: Pick<ArchiveStore, 'maxGeneration' | 'paths' | 'root'>;
  readonly client: Pick<FleetClient, 'stopCheckpoints'>;
  readonly logger: Logger;
  providerFor(address: Address): SandboxProvider;
  readonly bases: Pick<BaseRegistry, 'removeReference'>;
  readonly resets: Pick<WorkspaceResetStore, 'checkpointIds' | 'removeRecords'>;
}

export interface ResetResult {
  readonly workspaceId: string;
  readonly generation: number;
  readonly archiveMovedTo: string | null;
  readonly destroyed: string | null;
}

// Attempts at removing the records while checkpoints of a dying incarnation are still recorded.
const RECORD_ATTEMPTS = 5;

export async function resetWorkspace(deps: ResetDeps, workspaceId: string, signal: AbortSignal): Promise<ResetResult> {
  return deps.singleFlight.using(`provision:${workspaceId}`, async () => {
    const address = await deps.addresses.get(workspaceId);
    const runtime = await deps.runtime.get(workspaceId);
    const floor = await deps.archive.maxGeneration(workspaceId);
    const generation = await deps.addresses.bumpGeneration(workspaceId, floor);
    let destroyed: string | null = null;
    if (address) {
      await deps.client.stopCheckpoints(workspaceId).catch(() => undefined);
      // The handle is read back from Redis: only an incarnation of this workspace is destroyed.
      const invalid = firstInvalidId({ workspaceId, handle: address.handle });
      if (invalid) deps.logger.warn({ workspaceId, ...invalid }, 'reset: the address names an invalid handle; not destroyed');
      else {
        await deps.providerFor(address).destroy(address.handle, signal).catch(() => undefined);
        destroyed = address.handle;
      }
    }
    const archiveMovedTo = await moveArchiveAside(deps, workspaceId);
    await removeRecords(deps, workspaceId, generation);
    if (runtime?.baseSnapshotId) await deps.bases.removeReference(runtime.baseSnapshotId, workspaceId).catch(() => undefined);
    return { workspaceId, generation, archiveMovedTo, destroyed };
  });
}

// Moves the workspace's archive directory aside (null when it had none).
async function moveArchiveAside(deps: ResetDeps, workspaceId: string): Promise<string | null> {
  const dir = deps.archive.paths(workspaceId).dir;
  const aside = resetAsidePath(deps.archive.root, workspaceId, new Date());
  try {
    await mkdir(path.dirname(aside), { recursive: true, mode: 0o700 });
    await rename(dir, aside);
    return aside;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return null;
  }
}

// Removes every Redis record in one fenced step, reading the checkpoint list again if it changed.
async function removeRecords(deps: ResetDeps, workspaceId: string, generation: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const ids = await deps.resets.checkpointIds(workspaceId);
    const result = await deps.resets.removeRecords(workspaceId, generation, ids);
    if (result.reset) return;
    if (result.reason === 'generation-moved' || attempt >= RECORD_ATTEMPTS) {
      throw new ResetInterruptedError(`workspace ${workspaceId}: reset interrupted (${result.reason}); run it again`, { context: { workspaceId, generation, reason: result.reason } });
    }
  }
}
