/**
 * Resolves a path inside a tree without following symlinks: the path must be relative, without
 * `..` or empty segments, and no existing component may be a symlink. Used for every file the
 * fleet reads or writes inside a sandbox tree on the host.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { PayloadInvalidError } from '../../errors/payload-invalid-error.js';

/** Longest file name (bytes) Linux filesystems accept (NAME_MAX). */
const NAME_MAX_BYTES = 255;
/** Longest relative path (bytes) accepted, so that it fits PATH_MAX (4096 with the NUL). */
const PATH_MAX_BYTES = 4_095;

/** Validates a relative path's shape (pure). */
export function checkRelativePath(field: string, relative: string): string[] {
  const parts = relative.split('/');
  if (relative === '' || relative.startsWith('/') || relative.includes('\0') || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new PayloadInvalidError('path', [{ field, message: 'must be a relative path without "..", ".", empty segments or NUL', value: relative }]);
  }
  if (Buffer.byteLength(relative) > PATH_MAX_BYTES || parts.some((p) => Buffer.byteLength(p) > NAME_MAX_BYTES)) {
    throw new PayloadInvalidError('path', [{ field, message: `must be at most ${PATH_MAX_BYTES} bytes with names of at most ${NAME_MAX_BYTES} bytes`, value: relative }]);
  }
  return parts;
}

/**
 * Returns the absolute path of `relative` under `root` after checking that no existing
 * component (including the last) is a symlink. `allowMissing` lets the tail not exist yet.
 */
export async function resolveInside(root: string, relative: string, field = 'path'): Promise<string> {
  const parts = checkRelativePath(field, relative);
  let current = root;
  for (const part of parts) {
    current = path.join(current, part);
    try {
      const stats = await lstat(current);
      if (stats.isSymbolicLink()) {
        throw new PayloadInvalidError('path', [{ field, message: 'passes through a symlink; refusing to follow it', value: relative }]);
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return path.join(root, ...parts);
      // A component is a file (or the whole path is too long for this root): the path cannot exist in this tree.
      if ((code === 'ENOTDIR' || code === 'ENAMETOOLONG') && (await isDirectory(root))) {
        throw new PayloadInvalidError('path', [{ field, message: code === 'ENOTDIR' ? 'passes through a file' : 'is too long for this tree', value: relative }]);
      }
      throw error;
    }
  }
  return current;
}

// True when `p` is a real directory (the tree root is intact, so the caller's path is to blame).
async function isDirectory(p: string): Promise<boolean> {
  return (await lstat(p).catch(() => null))?.isDirectory() ?? false;
}
