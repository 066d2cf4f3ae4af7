/**
 * Archives a baked base's files into the object store and records its root tree
 * (archive/base-roots.ts), so a workspace made from the base persists only what it changed
 * from it (persist/base-seed.ts). Done once per snapshot, while the bake tests its candidate (or
 * when a bake reuses a ready base that has no record yet), from one of:
 *
 * - the provider's copy of the snapshot on this host (local: a directory the fleet made, never
 *   writable by a sandbox), walked by directory handles like a persist;
 * - a sandbox fresh from the snapshot, before anything ran in it (Vercel: `listTree`), listed and
 *   fetched straight into the store like a listed persist.
 *
 * A source that cannot be read whole (a listing cut short, a file that changed while it was
 * fetched) archives nothing: a record must name the base's tree, or none.
 */
import { lstat } from 'node:fs/promises';
import type { BaseRoot, BaseRoots } from '../archive/base-roots.js';
import { BasisLookup, buildFromListing, planListing } from '../archive/listing-builder.js';
import type { ObjectStore } from '../archive/object-store.js';
import { StoreBuilder } from '../archive/store-builder.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import type { ListedTree } from '../providers/sandbox-provider.js';
import { fetchIntoStore } from '../persist/fetch-into-store.js';
import { SNAPSHOT_ID_PATTERN } from '../queues/payload.js';
import { asStoreWriter, type StoreWriters } from '../state/store-writers.js';
import { DirHandle } from '../tree/dir-handle.js';
import type { TreeLimits } from '../tree/tree-limits.js';

export interface ArchiveBaseDeps {
  readonly bases: Pick<BaseRoots, 'put' | 'read'>;
  readonly objects: ObjectStore;
  readonly storeWriters: Pick<StoreWriters, 'begin'>;
  readonly treeLimits: TreeLimits;
}

/** Where a base's files are read from. */
export type BaseFiles = { readonly kind: 'directory'; readonly path: string } | { readonly kind: 'listed'; open(): Promise<ListedTree> };

/** A base's files as a root tree, with what it holds. */
type Built = Pick<BaseRoot, 'root' | 'files' | 'bytes' | 'entries'>;

/**
 * The base's record, written now or earlier; null when `files` is null or its directory is not
 * on this host. Throws when the source could not be archived whole.
 */
export async function archiveBase(deps: ArchiveBaseDeps, snapshotId: string, files: BaseFiles | null, signal: AbortSignal): Promise<BaseRoot | null> {
  if (!SNAPSHOT_ID_PATTERN.test(snapshotId)) throw new TypeError(`not a snapshot id: ${JSON.stringify(snapshotId)}`);
  const existing = await deps.bases.read(snapshotId).catch(() => null);
  if (existing) return existing;
  if (files === null || (files.kind === 'directory' && !(await isDirectory(files.path)))) return null;
  return asStoreWriter(deps.storeWriters, 'base-archive', async () => {
    const scanStartedAt = BigInt(Date.now()) * 1_000_000n;
    const built = files.kind === 'directory' ? await fromDirectory(deps, files.path, signal) : await fromListing(deps, snapshotId, await files.open(), signal);
    const record: BaseRoot = { format: 1, snapshotId, ...built, scanStartedAt: scanStartedAt.toString(), createdAt: new Date().toISOString() };
    await deps.bases.put(record);
    return record;
  });
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await lstat(dir)).isDirectory();
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return false;
    throw error;
  }
}

async function fromDirectory(deps: ArchiveBaseDeps, dir: string, signal: AbortSignal): Promise<Built> {
  const source = await DirHandle.open(dir);
  try {
    const builder = new StoreBuilder({ store: deps.objects, basis: null, cache: null, keepMissing: false, limits: deps.treeLimits, signal });
    const root = await builder.build(source);
    const { tally } = builder;
    if (tally.refusedCount > 0 || tally.vanished > 0) throw new Error(`the snapshot's directory could not be read whole (${tally.refusedCount} entries refused, ${tally.vanished} vanished)`);
    return { root, files: builder.files, bytes: builder.bytes, entries: builder.entries };
  } finally {
    await source.close();
  }
}

async function fromListing(deps: ArchiveBaseDeps, snapshotId: string, tree: ListedTree, signal: AbortSignal): Promise<Built> {
  try {
    const listed = await tree.list(signal);
    if (listed.listing.truncated) throw new Error(`the listing of a sandbox made from ${snapshotId} was cut short`);
    const lookup = new BasisLookup(deps.objects, null);
    const plan = await planListing({ basis: lookup, listing: listed.listing, index: null, maxFileBytes: deps.treeLimits.maxFileBytes, hasObject: (id) => deps.objects.hasObjectSync(id), signal });
    if (plan.refused.size > 0) throw new Error(`${plan.refused.size} files of ${snapshotId} are over the ${deps.treeLimits.maxFileBytes}-byte limit`);
    const got = await fetchIntoStore(tree, [...plan.fetch.values()], deps.objects, { signal });
    if (got.unstable > 0 || got.unexpected > 0 || got.stored.size !== plan.fetch.size) throw new Error(`the files of a sandbox made from ${snapshotId} changed while they were fetched`);
    const build = await buildFromListing({ store: deps.objects, basis: lookup, basisRoot: null, listing: listed.listing, plan, fetched: got.stored, seedIndexable: listed.settled, index: null, keepMissing: false, signal });
    return { root: build.root, files: build.files, bytes: build.bytes, entries: build.entries };
  } finally {
    await tree.release();
  }
}
