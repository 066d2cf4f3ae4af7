/**
 * What changed between two format 2 trees, by id: a directory whose tree id is the same on both
 * sides is skipped without being read, so the cost follows the change, not the size of the tree
 * (docs/archive-format.md: an unchanged directory keeps its tree id). Pure over the object store.
 *
 * - A name only in `to` is added; only in `from`, deleted. A directory added or deleted whole
 *   lists every entry below it too.
 * - A name whose type differs (a file that became a directory) is deleted, then added.
 * - A name of one type is changed when what it is differs: a file's content id or mode, a
 *   directory's mode (its entries are compared below it), a symlink's target, a FIFO's mode. A
 *   file's mtime alone is no change.
 *
 * Changes come in walk order (a directory's entries, then each subdirectory's, in name order),
 * at most `limit` of them; `truncated` says the walk stopped there.
 */
import type { ObjectStore } from './object-store.js';
import type { TreeNode } from './tree-object.js';
import { childRel } from './tree-walk.js';

export type TreeChangeKind = 'added' | 'changed' | 'deleted';

export interface TreeChange {
  readonly kind: TreeChangeKind;
  /** Path below the root, '/'-separated name bytes. */
  readonly path: Buffer;
  /** The node in `from` (null when added). */
  readonly before: TreeNode | null;
  /** The node in `to` (null when deleted). */
  readonly after: TreeNode | null;
}

export interface TreeDiff {
  readonly changes: readonly TreeChange[];
  /** The walk stopped at `limit` changes; more follow. */
  readonly truncated: boolean;
  /** Tree objects read (the cost: identical subtrees are never read). */
  readonly treesRead: number;
}

export interface DiffOptions {
  /** The most changes listed. */
  readonly limit: number;
}

/** True when a node differs from one of the same name and type (see the rules above). */
export function nodeChanged(before: TreeNode, after: TreeNode): boolean {
  if (before.type !== after.type) return true;
  switch (before.type) {
    case 'f': {
      const f = after as typeof before;
      return before.object !== f.object || before.mode !== f.mode;
    }
    case 'd': {
      const d = after as typeof before;
      return before.tree !== d.tree || before.mode !== d.mode;
    }
    case 'l':
      return !before.target.equals((after as typeof before).target);
    case 'p':
      return before.mode !== (after as typeof before).mode;
  }
}

// Thrown inside the walk once `limit` changes are listed and one more is found.
class LimitReached {}

export async function diffTrees(store: Pick<ObjectStore, 'readTree'>, from: string, to: string, { limit }: DiffOptions): Promise<TreeDiff> {
  const changes: TreeChange[] = [];
  let treesRead = 0;

  const read = (id: string): Promise<TreeNode[]> => {
    treesRead += 1;
    return store.readTree(id);
  };

  // Records one change (stops the walk past the limit).
  const emit = (change: TreeChange): void => {
    if (changes.length >= limit) throw new LimitReached();
    changes.push(change);
  };

  // Every entry below a directory added or deleted whole.
  const listWhole = async (tree: string, rel: Buffer, kind: 'added' | 'deleted'): Promise<void> => {
    const subdirs: { tree: string; rel: Buffer }[] = [];
    for (const node of await read(tree)) {
      const path = childRel(rel, node.name);
      emit({ kind, path, before: kind === 'deleted' ? node : null, after: kind === 'added' ? node : null });
      if (node.type === 'd') subdirs.push({ tree: node.tree, rel: path });
    }
    for (const sub of subdirs) await listWhole(sub.tree, sub.rel, kind);
  };

  // Compares two directories whose tree ids differ.
  const compare = async (before: string, after: string, rel: Buffer): Promise<void> => {
    const [old, now] = await Promise.all([read(before), read(after)]);
    const below: (() => Promise<void>)[] = [];
    let i = 0;
    let j = 0;
    while (i < old.length || j < now.length) {
      const order = i >= old.length ? 1 : j >= now.length ? -1 : Buffer.compare(old[i]!.name, now[j]!.name);
      const a = order <= 0 ? old[i++]! : null;
      const b = order >= 0 ? now[j++]! : null;
      const path = childRel(rel, (a ?? b)!.name);
      if (a && b && a.type === b.type) {
        if (a.type === 'd' && b.type === 'd') {
          if (a.mode !== b.mode) emit({ kind: 'changed', path, before: a, after: b });
          if (a.tree !== b.tree) below.push(() => compare(a.tree, b.tree, path));
        } else if (nodeChanged(a, b)) emit({ kind: 'changed', path, before: a, after: b });
        continue;
      }
      if (a) {
        emit({ kind: 'deleted', path, before: a, after: null });
        if (a.type === 'd') below.push(() => listWhole(a.tree, path, 'deleted'));
      }
      if (b) {
        emit({ kind: 'added', path, before: null, after: b });
        if (b.type === 'd') below.push(() => listWhole(b.tree, path, 'added'));
      }
    }
    for (const next of below) await next();
  };

  if (from === to) return { changes, truncated: false, treesRead };
  try {
    await compare(from, to, Buffer.alloc(0));
    return { changes, truncated: false, treesRead };
  } catch (error) {
    if (error instanceof LimitReached) return { changes, truncated: true, treesRead };
    throw error;
  }
}
