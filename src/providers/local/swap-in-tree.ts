import { randomBytes } from 'node:crypto';
import { rename } from 'node:fs/promises';
import { fsyncDir } from '../../archive/fsync.js';
import { removeTree } from '../../tree/remove-tree.js';
import type { LivePaths } from './live-paths.js';

/** Replaces the live root by a finished staging tree (old tree removed after the rename). Call under the workspace lock. */
export async function swapInTree(paths: LivePaths, staging: string): Promise<void> {
  const old = paths.staging(`old-${randomBytes(3).toString('hex')}`);
  let moved = false;
  try {
    await rename(paths.root, old);
    moved = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await rename(staging, paths.root);
  await fsyncDir(paths.dir);
  // The old tree is the sandbox's (a process may still be changing it): removed by handles.
  if (moved) await removeTree(old);
}
