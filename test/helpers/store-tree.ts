// A source directory stored into a format 2 store as a first revision (no basis, no cache, no limits).
import { ObjectStore } from '../../src/archive/object-store.js';
import { StoreBuilder } from '../../src/archive/store-builder.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { UNLIMITED_TREE } from '../../src/tree/tree-limits.js';

/** Stores the tree at `source` and returns its root tree id. */
export async function storeTree(store: ObjectStore, source: string): Promise<string> {
  const src = await DirHandle.open(source);
  try {
    return await new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(60_000) }).build(src);
  } finally {
    await src.close();
  }
}
