/** Base snapshots on this host: `{snapshotRoot}/{snapshotId}/tree`, made by the fleet (snapshot-live-tree.ts). */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { removeTree } from '../../tree/remove-tree.js';
import type { SnapshotStatus } from '../sandbox-provider.js';
import { checkSnapshotId } from './local-ids.js';

/** Usable while its tree is there: local snapshots never expire. */
export async function snapshotStatus(snapshotRoot: string, snapshotId: string): Promise<SnapshotStatus> {
  checkSnapshotId('snapshotStatus', snapshotId);
  const tree = await lstat(path.join(snapshotRoot, snapshotId, 'tree')).catch(() => null);
  return tree?.isDirectory() ? 'usable' : 'missing';
}

/** Removes a snapshot directory; an absent one is not an error. */
export async function deleteSnapshot(snapshotRoot: string, snapshotId: string): Promise<void> {
  checkSnapshotId('deleteSnapshot', snapshotId);
  await removeTree(path.join(snapshotRoot, snapshotId));
}
