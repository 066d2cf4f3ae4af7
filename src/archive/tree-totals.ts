/**
 * What a tree object holds below it: files, their bytes, and entries (every node at any depth).
 * A persist that takes a directory's previous tree by id without walking it counts that tree's
 * totals instead of its entries. Tree ids are content addresses, so a total once computed holds
 * forever: totals are kept per store (bounded), and the first persist that reuses a subtree reads
 * its trees once (from the store's tree cache when they are there).
 */
import type { ObjectStore } from './object-store.js';

export interface TreeTotal {
  readonly files: number;
  readonly bytes: number;
  /** Nodes below the tree, at any depth (the tree's own node is its parent's). */
  readonly entries: number;
}

/** Totals kept per store (about 100 bytes each). */
const KEPT_TOTALS = 500_000;

const memos = new WeakMap<ObjectStore, Map<string, TreeTotal>>();

/** The totals of tree `id` of `store`. */
export async function treeTotal(store: ObjectStore, id: string): Promise<TreeTotal> {
  let memo = memos.get(store);
  if (!memo) memos.set(store, (memo = new Map()));
  const known = memo.get(id);
  if (known) return known;
  let files = 0;
  let bytes = 0;
  let entries = 0;
  for (const node of await store.readTree(id)) {
    entries += 1;
    if (node.type === 'f') {
      files += 1;
      bytes += node.size;
    } else if (node.type === 'd') {
      const below = await treeTotal(store, node.tree);
      files += below.files;
      bytes += below.bytes;
      entries += below.entries;
    }
  }
  const total = { files, bytes, entries };
  if (memo.size >= KEPT_TOTALS) memo.delete(memo.keys().next().value!);
  memo.set(id, total);
  return total;
}
