import { rm, rmdir } from 'node:fs/promises';
import { errnoOf } from '../../errors/classify-storage-error.js';
import { removeTree } from '../../tree/remove-tree.js';
import { statCacheFiles } from '../../archive/stat-cache.js';
import { ProviderBusyError } from '../provider-errors.js';
import { indexedSandbox } from './mirror-index.js';
import { lockMirror } from './mirror-lock.js';
import { mirrorPaths } from './mirror-paths.js';

/**
 * Removes the host's mirror of a destroyed sandbox, unless it already belongs to a later
 * incarnation of the workspace or a persist holds it (it is only a cache: a mirror left behind
 * costs disk, never correctness).
 */
export async function removeMirror(root: string, handle: string): Promise<void> {
  const paths = mirrorPaths(root, handle);
  const owner = await indexedSandbox(paths.index);
  if (owner !== null && owner !== handle) return;
  let release: () => Promise<void>;
  try {
    release = await lockMirror(paths.lock);
  } catch (error) {
    if (error instanceof ProviderBusyError || errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  try {
    await removeTree(paths.tree);
    await removeTree(paths.staging);
    await rm(paths.index, { force: true });
    for (const file of statCacheFiles(paths.statCache)) await rm(file, { force: true });
  } finally {
    await release();
  }
  await rmdir(paths.dir).catch(() => undefined);
}
