/** Bytes a directory tree frees when removed: files no other revision hard-links (nlink = 1). */
import { lstat } from 'node:fs/promises';
import { absoluteBytes, walkTree } from '../archive/tree-walk.js';

export async function reclaimableBytes(root: string): Promise<number> {
  let bytes = 0;
  try {
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
