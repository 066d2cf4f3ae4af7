import { DirHandle } from '../../tree/dir-handle.js';
import { classifyFsError } from './classify-fs-error.js';
import type { LivePaths } from './live-paths.js';

/** Opens the live tree's root (a real directory, never a symlink). */
export async function openLiveRoot(paths: LivePaths, operation: string): Promise<DirHandle> {
  try {
    return await DirHandle.open(paths.root);
  } catch (error) {
    throw classifyFsError(error, operation);
  }
}
