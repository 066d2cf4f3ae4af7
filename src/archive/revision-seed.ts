/**
 * A format 2 revision as a `TreeSeed` (sandbox-provider.ts): every regular file of its trees by
 * path, with what the revision recorded and where its object is. The record and trees are read
 * only when a provider asks (it lost its copy of the tree), one directory at a time, bounded by
 * the entries the revision has; a format 1 revision seeds nothing.
 */
import type { SeedFile, TreeSeed } from './tree-seed.js';
import type { ArchiveStore } from './archive-store.js';
import { keyOf } from './prior-index.js';

export function revisionSeed(archive: ArchiveStore, workspaceId: string, revision: string): TreeSeed {
  return {
    async files(signal) {
      const files = new Map<string, SeedFile>();
      const record = await archive.readRecord(workspaceId, revision);
      if (!record) return files;
      const walk = async (tree: string, prefix: string): Promise<void> => {
        signal.throwIfAborted();
        for (const node of await archive.objects.readTree(tree)) {
          const key = prefix + keyOf(node.name);
          if (node.type === 'd') await walk(node.tree, `${key}/`);
          else if (node.type === 'f') files.set(key, { size: node.size, mode: node.mode, mtimeNs: node.mtimeNs, path: archive.objects.objectPath(node.object) });
        }
      };
      await walk(record.root, '');
      return files;
    },
  };
}
