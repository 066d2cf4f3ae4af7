/**
 * Unpacks a tree archive into a local directory without trusting it: the archive comes from inside
 * a sandbox, where an agent may have replaced `tar` or planted links.
 *
 * - No entry may be absolute or contain a `..` segment (`UnsafeTarEntryError`).
 * - Symlinks are created as symlinks with their target verbatim and are never followed: every
 *   parent of an entry must be a real directory created by this extraction, and files are opened
 *   with `O_NOFOLLOW | O_EXCL`, so nothing can be written through a link.
 * - Hard links are materialised as copies of a regular file already extracted.
 * - Device nodes, FIFOs and other special entries are skipped (counted in `skipped`), and so is
 *   an entry whose path is longer than the archive takes (`DEFAULT_TREE_LIMITS.maxPathBytes`):
 *   a tree nested past PATH_MAX must not make every persist of the workspace fail.
 * - Permission bits are kept without setuid/setgid/sticky; modification times are kept.
 */
import { constants } from 'node:fs';
import { copyFile, lstat, lutimes, mkdir, open, rm, symlink, unlink, utimes, chmod } from 'node:fs/promises';
import path from 'node:path';
import { readTar, type TarEntry } from './read-tar.js';
import { UnsafeTarEntryError } from './unsafe-tar-entry-error.js';
import { DEFAULT_TREE_LIMITS } from '../../tree/tree-limits.js';

export interface ExtractSummary {
  readonly files: number;
  readonly directories: number;
  readonly symlinks: number;
  readonly skipped: number;
}

const PERMISSION_BITS = 0o777;

/** Extracts the (uncompressed) tar stream `source` into the existing directory `dest`. */
export async function extractTree(source: AsyncIterable<Buffer | Uint8Array | string>, dest: string): Promise<ExtractSummary> {
  const counts = { files: 0, directories: 0, symlinks: 0, skipped: 0 };
  const directoryTimes: { target: string; mode: number; mtime: number }[] = [];
  for await (const { entry, content } of readTar(source)) {
    const relative = safeRelative(entry.path, entry.path);
    if (entry.type === 'other' || Buffer.byteLength(relative) > DEFAULT_TREE_LIMITS.maxPathBytes) {
      counts.skipped += 1;
      continue;
    }
    if (relative === '') {
      if (entry.type === 'directory') directoryTimes.push({ target: dest, mode: entry.mode, mtime: entry.mtime });
      continue;
    }
    const target = await preparePath(dest, relative, entry);
    if (entry.type === 'directory') {
      await ensureDirectory(target, entry.path);
      directoryTimes.push({ target, mode: entry.mode, mtime: entry.mtime });
      counts.directories += 1;
    } else if (entry.type === 'file') {
      await writeFile(target, entry, content);
      counts.files += 1;
    } else if (entry.type === 'symlink') {
      await symlink(entry.linkpath, target);
      await lutimes(target, entry.mtime, entry.mtime);
      counts.symlinks += 1;
    } else {
      await copyHardLink(dest, target, entry);
      counts.files += 1;
    }
  }
  // Deepest first, so setting a parent's time is not undone by touching a child.
  for (const { target, mode, mtime } of directoryTimes.reverse()) {
    await chmod(target, (mode & PERMISSION_BITS) | 0o700);
    await utimes(target, mtime, mtime);
  }
  return counts;
}

// Normalises an archive path to `a/b` or throws when it could escape the destination.
function safeRelative(input: string, entryPath: string): string {
  if (input.includes('\0')) throw new UnsafeTarEntryError(entryPath, 'contains a NUL byte');
  if (input.startsWith('/')) throw new UnsafeTarEntryError(entryPath, 'is absolute');
  const segments = input.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new UnsafeTarEntryError(entryPath, 'climbs out with ..');
  return segments.join('/');
}

// Makes sure every parent of `relative` is a real directory and clears a non-directory at the
// target itself; returns the absolute target path.
async function preparePath(dest: string, relative: string, entry: TarEntry): Promise<string> {
  const segments = relative.split('/');
  let current = dest;
  for (const segment of segments.slice(0, -1)) {
    current = path.join(current, segment);
    await ensureDirectory(current, entry.path);
  }
  const target = path.join(current, segments.at(-1)!);
  const existing = await lstat(target).catch(() => null);
  if (existing !== null && !(entry.type === 'directory' && existing.isDirectory())) {
    if (existing.isDirectory()) await rm(target, { recursive: true });
    else await unlink(target);
  }
  return target;
}

// Creates `dir` unless it already is a real directory; refuses symlinks and files in the way.
async function ensureDirectory(dir: string, entryPath: string): Promise<void> {
  const existing = await lstat(dir).catch(() => null);
  if (existing === null) {
    await mkdir(dir, { mode: 0o755 });
    return;
  }
  if (existing.isSymbolicLink()) throw new UnsafeTarEntryError(entryPath, 'a parent directory is a symlink');
  if (!existing.isDirectory()) throw new UnsafeTarEntryError(entryPath, 'a parent directory is not a directory');
}

// Writes a regular file without following links.
async function writeFile(target: string, entry: TarEntry, content: AsyncIterable<Buffer>): Promise<void> {
  const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    for await (const chunk of content) await handle.write(chunk);
    await handle.chmod(entry.mode & PERMISSION_BITS);
  } finally {
    await handle.close();
  }
  await utimes(target, entry.mtime, entry.mtime);
}

// A hard link becomes a copy of a regular file extracted earlier.
async function copyHardLink(dest: string, target: string, entry: TarEntry): Promise<void> {
  const linked = safeRelative(entry.linkpath, entry.path);
  const source = path.join(dest, linked);
  const stat = await lstat(source).catch(() => null);
  if (stat === null || !stat.isFile()) throw new UnsafeTarEntryError(entry.path, 'hard link to something that is not an extracted regular file');
  // Every parent of the source must be a real directory, too.
  let current = dest;
  for (const segment of linked.split('/').slice(0, -1)) {
    current = path.join(current, segment);
    const parent = await lstat(current);
    if (!parent.isDirectory()) throw new UnsafeTarEntryError(entry.path, 'hard link through a symlink');
  }
  await copyFile(source, target, constants.COPYFILE_EXCL);
  await utimes(target, entry.mtime, entry.mtime);
}
