/**
 * The seed of a workspace's first persist: the root tree of the baked base it was made from
 * (archive/base-roots.ts), when the bake archived one. Against it the first persist references
 * every file the base holds unchanged (same size, mode and mtime, none written in the second
 * before the base was walked) instead of reading it, and stores the directories the workspace
 * changed as patches of the base's trees: a workspace costs the archive what it changed from its
 * base, not its whole tree. A seed is only a hint: a missing, unreadable or foreign record is no
 * seed (the persist reads everything, as without a base).
 */
import type { BaseRoots } from '../archive/base-roots.js';
import type { StoreBasis } from '../archive/store-builder.js';
import { clockLine } from '../archive/change-stamp.js';
import { SNAPSHOT_ID_PATTERN } from '../queues/payload.js';
import type { RuntimeStore } from '../state/runtime-store.js';

export interface BaseSeedDeps {
  readonly runtime: Pick<RuntimeStore, 'get'>;
  readonly bases: Pick<BaseRoots, 'read'>;
}

/** The archived root of the base `workspaceId` started from, or null. */
export async function baseSeedOf(deps: BaseSeedDeps, workspaceId: string): Promise<StoreBasis | null> {
  const snapshotId = (await deps.runtime.get(workspaceId))?.baseSnapshotId;
  // The id comes from Redis: checked again before it names a file.
  if (!snapshotId || !SNAPSHOT_ID_PATTERN.test(snapshotId)) return null;
  const record = await deps.bases.read(snapshotId).catch(() => null);
  return record ? { root: record.root, changedAfterNs: clockLine(BigInt(record.scanStartedAt)) } : null;
}
