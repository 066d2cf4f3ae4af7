/**
 * Reads format 2 revisions through their trees: one path (a cold read of one file: a lookup down
 * the trees, no full listing), or every entry in walk order as manifest entries (what format 1
 * manifests hold, so code written against manifests reads both formats).
 */
import type { ManifestEntry } from './manifest.js';
import type { ObjectStore } from './object-store.js';
import type { FileNode, TreeNode } from './tree-object.js';
import { childRel, encodePath } from './tree-walk.js';

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
