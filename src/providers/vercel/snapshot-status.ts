import { Snapshot } from '@vercel/sandbox';
import type { SnapshotStatus } from '../sandbox-provider.js';
import { hasStatus } from './classify-vercel-error.js';
import type { VercelConnection } from './vercel-connection.js';

/**
 * Whether a Vercel snapshot can seed a sandbox now, from `Snapshot.get` (reference §6): a
 * `created` snapshot whose `expiresAt` (absent = never) is still ahead is usable; a deleted one
 * is `expired` when its expiry has passed (the API deletes expired snapshots) and `deleted`
 * otherwise; a failed or unknown (404) one is `missing`.
 */
export async function snapshotStatus(connection: VercelConnection, snapshotId: string, signal: AbortSignal, now = Date.now()): Promise<SnapshotStatus> {
  let snapshot: Snapshot;
  try {
    snapshot = await Snapshot.get({ ...connection, snapshotId, signal });
  } catch (error) {
    if (hasStatus(error, 404, 410)) return 'missing';
    throw error;
  }
  const expired = snapshot.expiresAt !== undefined && snapshot.expiresAt.getTime() <= now;
  if (snapshot.status === 'created') return expired ? 'expired' : 'usable';
  if (snapshot.status === 'deleted') return expired ? 'expired' : 'deleted';
  return 'missing';
}
