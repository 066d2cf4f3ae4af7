/**
 * Reads format 2 revisions through their trees: one path (a cold read of one file: a lookup down
 * the trees, no full listing), or every entry in walk order as manifest entries (what format 1
 * manifests hold, so code written against manifests reads both formats).
 */
import type { ManifestEntry } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import type { FileNode, TreeNode } from './tree-object.js';
import { childRel, encodePath } from './tree-walk.js';

/** Where a path lands in a revision: a node, nothing, or below something that is not a directory. */
export type PathLookup = { readonly state: 'node'; readonly node: TreeNode } | { readonly state: 'absent' | 'blocked' };

/** Resolves `rel` down the trees of `root`, telling a missing path from one under a file or symlink. */
export async function resolvePath(store: Pick<ObjectStore, 'readTree'>, root: string, rel: Buffer): Promise<PathLookup> {
  let tree = root;
  let start = 0;
  for (;;) {
    const slash = rel.indexOf(0x2f, start);
    const part = rel.subarray(start, slash < 0 ? rel.length : slash);
    const node = (await store.readTree(tree)).find((n) => n.name.equals(part));
    if (!node) return { state: 'absent' };
    if (slash < 0) return { state: 'node', node };
    if (node.type !== 'd') return { state: 'blocked' };
    tree = node.tree;
    start = slash + 1;
  }
}

/** The node at `rel` (bytes, '/'-separated) below the tree `root`; null when absent. */
export async function lookupPath(store: ObjectStore, root: string, rel: Buffer): Promise<TreeNode | null> {
  const parts: Buffer[] = [];
  for (let start = 0; start <= rel.length; ) {
    const slash = rel.indexOf(0x2f, start);
    const end = slash < 0 ? rel.length : slash;
    parts.push(rel.subarray(start, end));
    start = end + 1;
  }
  let tree = root;
  for (let i = 0; i < parts.length; i++) {
    const node = (await store.readTree(tree)).find((n) => n.name.equals(parts[i]!));
    if (!node) return null;
    if (i === parts.length - 1) return node;
    if (node.type !== 'd') return null;
    tree = node.tree;
  }
  return null;
}

/** A file node as a manifest entry at `p` (the object id is the content's SHA-256, as in format 1). */
function fileEntry(p: string, node: FileNode): ManifestEntry {
  return { p, t: 'f', m: node.mode, s: node.size, h: node.object, n: node.mtimeNs.toString() };
}

/**
 * Every entry below `root` as manifest entries, in the walk order of format 1 manifests (a
 * directory's entries, then each subdirectory's, in name order). `onTree` sees every tree id.
 */
export async function flattenTree(store: ObjectStore, root: string, onTree?: (id: string) => void): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  const visit = async (tree: string, rel: Buffer): Promise<void> => {
    onTree?.(tree);
    const nodes = await store.readTree(tree);
    const subdirs: { tree: string; rel: Buffer }[] = [];
    for (const node of nodes) {
      const childPath = childRel(rel, node.name);
      const p = encodePath(childPath);
      switch (node.type) {
        case 'f':
          out.push(fileEntry(p, node));
          break;
        case 'd':
          out.push({ p, t: 'd', m: node.mode });
          subdirs.push({ tree: node.tree, rel: childPath });
          break;
        case 'l':
          out.push({ p, t: 'l', m: 0, l: encodePath(node.target) });
          break;
        case 'p':
          out.push({ p, t: 'p', m: node.mode, n: node.mtimeNs.toString() });
          break;
      }
    }
    for (const sub of subdirs) await visit(sub.tree, sub.rel);
  };
  await visit(root, Buffer.alloc(0));
  return out;
}

/** What a newer revision no longer has of an older one. */
export interface RemovedCounts {
  /** Regular files of `before` that are not regular files at the same path in `after`. */
  readonly files: number;
  /** Paths of `before` that `after` lacks (any type). */
  readonly entries: number;
}

// Files and entries below a tree (a removed directory takes all of them with it).
async function countBelow(store: ObjectStore, tree: string): Promise<RemovedCounts> {
  let files = 0;
  let entries = 0;
  for (const node of await store.readTree(tree)) {
    entries += 1;
    if (node.type === 'f') files += 1;
    if (node.type === 'd') {
      const below = await countBelow(store, node.tree);
      files += below.files;
      entries += below.entries;
    }
  }
  return { files, entries };
}

/**
 * What `after` removed of `before` (both root tree ids), visiting only directories whose trees
 * differ: the cost follows the change.
 */
export async function countRemoved(store: ObjectStore, before: string | null, after: string): Promise<RemovedCounts> {
  if (before === null || before === after) return { files: 0, entries: 0 };
  const next = new Map((await store.readTree(after)).map((n) => [n.name.toString('latin1'), n]));
  let files = 0;
  let entries = 0;
  for (const old of await store.readTree(before)) {
    const now = next.get(old.name.toString('latin1'));
    if (old.type === 'd' && now?.type === 'd') {
      const below = await countRemoved(store, old.tree, now.tree);
      files += below.files;
      entries += below.entries;
      continue;
    }
    if (old.type === 'f' && now?.type !== 'f') files += 1;
    if (!now) entries += 1;
    if (old.type === 'd') {
      // Replaced by a non-directory, or gone: everything below went with it.
      const below = await countBelow(store, old.tree);
      files += below.files;
      entries += below.entries;
    }
  }
  return { files, entries };
}
