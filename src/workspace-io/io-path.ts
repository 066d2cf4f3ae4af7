/**
 * The path of a workspace file operation: relative, '/'-separated, without `..`, `.`, empty
 * segments or NUL, within PATH_MAX/NAME_MAX (the provider's own rule, safe-path.ts). `''` names
 * the root, for listings only.
 */
import { checkRelativePath } from '../providers/local/safe-path.js';

/** A validated file path and its segments. */
export function filePath(path: string): { readonly path: string; readonly parts: readonly string[] } {
  return { path, parts: checkRelativePath('path', path) };
}

/** A validated directory path (`''` or `.` for the root). */
export function dirPath(path: string): { readonly path: string; readonly parts: readonly string[] } {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '.') return { path: '', parts: [] };
  return filePath(trimmed);
}
