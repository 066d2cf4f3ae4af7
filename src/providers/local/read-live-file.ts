/** `readFile`: one regular file of the live tree, opened by handles beneath its root (never following a symlink). */
import { errnoOf } from '../../errors/classify-storage-error.js';
import { READ_FILE_FLAGS, type DirHandle } from '../../tree/dir-handle.js';
import { classifyFsError } from './classify-fs-error.js';
import type { LocalHost } from './handle-paths.js';
import { openLiveRoot } from './open-live-root.js';
import { ownSandbox } from './own-sandbox.js';
import { openParentBeneath } from './safe-path.js';

/** The file's content; null when it is missing or anything but a regular file. */
export async function readLiveFile(host: LocalHost, handle: string, relative: string): Promise<Buffer | null> {
  const { paths } = await ownSandbox(host, handle, 'readFile');
  const root = await openLiveRoot(paths, 'readFile');
  try {
    const parent = await openParentBeneath(root, relative);
    if (!parent) return null;
    try {
      return await readBeneath(parent.dir, parent.name);
    } finally {
      if (parent.owned) await parent.dir.close();
    }
  } catch (error) {
    throw classifyFsError(error, 'readFile');
  } finally {
    await root.close();
  }
}

// Reads the regular file `name` beneath `dir`; null when it is missing or anything but a regular file.
async function readBeneath(dir: DirHandle, name: Buffer): Promise<Buffer | null> {
  let input;
  try {
    input = await dir.openFile(name, READ_FILE_FLAGS);
  } catch (error) {
    // Missing, a symlink (never followed) or under a non-directory.
    if (['ENOENT', 'ELOOP', 'ENOTDIR'].includes(errnoOf(error) ?? '')) return null;
    throw error;
  }
  try {
    if (!(await input.stat()).isFile()) return null;
    return await input.readFile();
  } finally {
    await input.close();
  }
}
