// Format 2 trees in memory, built from a nested spec, behind a store that counts its reads (unit
// tests of the tree walks: no Redis, no disk).
import { encodeTree, sha256, type TreeNode } from '../../src/archive/tree-object.js';

/** A file's content, a file with a mode, a symlink, or a directory. */
export type TreeSpec = { readonly [name: string]: string | { readonly mode: number; readonly content: string } | { readonly link: string } | TreeSpec };

export function memoryTrees() {
  const trees = new Map<string, TreeNode[]>();
  const reads: string[] = [];
  const put = (spec: TreeSpec): string => {
    const nodes: TreeNode[] = Object.entries(spec).map(([name, value]): TreeNode => {
      const n = Buffer.from(name);
      if (typeof value === 'string') return { type: 'f', name: n, mode: 0o644, size: value.length, object: sha256(Buffer.from(value)), mtimeNs: 1n };
      if ('link' in value && typeof value.link === 'string') return { type: 'l', name: n, target: Buffer.from(value.link) };
      if ('content' in value && typeof value.content === 'string' && typeof value.mode === 'number') return { type: 'f', name: n, mode: value.mode, size: value.content.length, object: sha256(Buffer.from(value.content)), mtimeNs: 2n };
      return { type: 'd', name: n, mode: 0o755, tree: put(value as TreeSpec) };
    });
    const id = sha256(encodeTree(nodes));
    trees.set(id, [...nodes].sort((a, b) => Buffer.compare(a.name, b.name)));
    return id;
  };
  return {
    /** Stores a tree (and its subtrees); returns its id. */
    put,
    /** Every id read, in order. */
    reads,
    store: {
      async readTree(id: string): Promise<TreeNode[]> {
        reads.push(id);
        const nodes = trees.get(id);
        if (!nodes) throw new Error(`no tree ${id}`);
        return nodes;
      },
    },
  };
}
