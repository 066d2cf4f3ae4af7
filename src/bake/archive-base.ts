/**
 * Archives a baked base's files into the object store and records its root tree
 * (archive/base-roots.ts), so a workspace made from the base persists only what it changed
 * from it (persist/base-seed.ts). Done once per snapshot, after the bake promoted it (or when a
 * bake reuses a ready base that has no record yet). It reads the provider's copy of the
 * snapshot on this host (a local snapshot directory, made by the fleet and never writable by a
 * sandbox), by directory handles like a persist; a snapshot this host cannot see (a Vercel
 * snapshot, or another host's) is not archived.
 */
import { lstat } from 'node:fs/promises';
import type { BaseRoot, BaseRoots } from '../archive/base-roots.js';
import type { ObjectStore } from '../archive/object-store.js';
import { StoreBuilder } from '../archive/store-builder.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import { SNAPSHOT_ID_PATTERN } from '../queues/payload.js';
import { asStoreWriter, type StoreWriters } from '../state/store-writers.js';
import { DirHandle } from '../tree/dir-handle.js';
import type { TreeLimits } from '../tree/tree-limits.js';

export interface ArchiveBaseDeps {
  readonly bases: Pick<BaseRoots, 'put' | 'read'>;
  readonly objects: ObjectStore;
  readonly storeWriters: Pick<StoreWriters, 'begin'>;
  readonly treeLimits: TreeLimits;
  /** The directory holding a snapshot's files on this host, or null when the provider keeps none here. */
  readonly snapshotTree: (provider: string, snapshotId: string) => string | null;
}

/** The base's record, written now or earlier; null when this host cannot read the snapshot. */
export async function archiveBase(deps: ArchiveBaseDeps, provider: string, snapshotId: string, signal: AbortSignal): Promise<BaseRoot | null> {
  if (!SNAPSHOT_ID_PATTERN.test(snapshotId)) throw new TypeError(`not a snapshot id: ${JSON.stringify(snapshotId)}`);
  const existing = await deps.bases.read(snapshotId).catch(() => null);
  if (existing) return existing;
  const dir = deps.snapshotTree(provider, snapshotId);
  if (dir === null) return null;
  try {
    if (!(await lstat(dir)).isDirectory()) return null;
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw error;
  }
  return asStoreWriter(deps.storeWriters, 'base-archive', async () => {
    const source = await DirHandle.open(dir);
    try {
      const scanStartedAt = BigInt(Date.now()) * 1_000_000n;
      const builder = new StoreBuilder({ store: deps.objects, basis: null, cache: null, keepMissing: false, limits: deps.treeLimits, signal });
      const root = await builder.build(source);
      const record: BaseRoot = {
        format: 1,
        snapshotId,
        root,
        scanStartedAt: scanStartedAt.toString(),
        files: builder.files,
        bytes: builder.bytes,
        entries: builder.entries,
        createdAt: new Date().toISOString(),
      };
      await deps.bases.put(record);
      return record;
    } finally {
      await source.close();
    }
  });
}
