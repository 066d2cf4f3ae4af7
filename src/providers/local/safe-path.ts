/**
 * Resolves a path inside a tree without following symlinks: the path must be relative, without
 * `..` or empty segments, and no existing component may be a symlink. Used for every file the
 * fleet reads or writes inside a sandbox tree on the host.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { PayloadInvalidError } from '../../errors/payload-invalid-error.js';

/** Validates a relative path's shape (pure). */
export function checkRelativePath(field: string, relative: string): string[] {
  const parts = relative.split('/');
  if (relative === '' || relative.startsWith('/') || relative.includes('\0') || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new PayloadInvalidError('path', [{ field, message: 'must be a relative path without "..", ".", empty segments or NUL', value: relative }]);
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
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return path.join(root, ...parts);
      throw error;
    }
  }
  return current;
}
