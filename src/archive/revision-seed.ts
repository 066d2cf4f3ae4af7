/**
 * A format 2 revision as a `TreeSeed` (sandbox-provider.ts): every regular file of its trees by
 * path, with what the revision recorded and a way to read its object. Trees are read only when a
 * provider asks (it lost its copy of the tree), one directory at a time, bounded by the entries
 * the revision has.
 */
import type { SeedFile, TreeSeed } from '../providers/sandbox-provider.js';
import type { ObjectStore } from './object-store.js';
import { keyOf } from './prior-index.js';

export function revisionSeed(store: ObjectStore, root: string): TreeSeed {
  return {
    async files(signal) {
      const files = new Map<string, SeedFile>();
      const walk = async (tree: string, prefix: string): Promise<void> => {
        signal.throwIfAborted();
        for (const node of await store.readTree(tree)) {
          const key = prefix + keyOf(node.name);
          if (node.type === 'd') await walk(node.tree, `${key}/`);
          else if (node.type === 'f') files.set(key, { size: node.size, mode: node.mode, mtimeNs: node.mtimeNs, path: store.objectPath(node.object) });
        }
      };
      await walk(root, '');
      return files;
    },
  };
}
