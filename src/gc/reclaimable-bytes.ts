/**
 * Bytes a path frees when removed: for a directory tree, its files no other revision hard-links
 * (nlink = 1); for a single file, its size when nothing else links it; nothing for a symlink.
 */
import { lstat } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { absoluteBytes, walkTree } from '../archive/tree-walk.js';

export async function reclaimableBytes(root: string): Promise<number> {
  let bytes = 0;
  try {
    const top = await lstat(root);
    if (!top.isDirectory()) return top.isFile() && top.nlink === 1 ? top.size : 0;
    for await (const entry of walkTree(root)) {
      if (entry.type !== 'file') continue;
      const stats = await lstat(absoluteBytes(root, entry.rel));
      if (stats.nlink === 1) bytes += stats.size;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return bytes;
}

/**
 * Bytes removing a committed revision frees at once: format 1 its unshared files, format 2 its
 * record (its objects and trees go later, by reachability, and are counted by that kind).
 */
export async function revisionBytes(archive: ArchiveStore, workspaceId: string, revision: string): Promise<number> {
  const paths = archive.paths(workspaceId);
  return (await reclaimableBytes(paths.revision(revision))) + (await reclaimableBytes(paths.record(revision)));
}
