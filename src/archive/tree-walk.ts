/**
 * Walks a tree without ever following a symlink (lstat only), with names as raw bytes so that
 * invalid UTF-8, newlines and leading dashes survive exactly. Yields entries in a stable order
 * (parents before children, names sorted bytewise).
 */
import { lstat, readdir, readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';

export type EntryType = 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'other';

export interface TreeEntry {
  /** Path relative to the root, as bytes ('/'-separated). */
  readonly rel: Buffer;
  readonly type: EntryType;
  readonly size: number;
  /** Permission bits (0o7777). */
  readonly mode: number;
  readonly ino: number;
  readonly mtimeMs: number;
  /** Symlink target as bytes. */
  readonly target?: Buffer;
}

// Maps lstat results to entry types.
function typeOf(stats: Stats): EntryType {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'dir';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  return 'other';
}

const SLASH = Buffer.from('/');

/** Joins a root (string) with a relative byte path into a byte path usable by fs calls. */
export function absoluteBytes(root: string, rel: Buffer): Buffer {
  return rel.length === 0 ? Buffer.from(root) : Buffer.concat([Buffer.from(root.replace(/\/+$/, '')), SLASH, rel]);
}

/** Yields every entry below `root` (not `root` itself). */
export async function* walkTree(root: string): AsyncGenerator<TreeEntry> {
  const stack: Buffer[] = [Buffer.alloc(0)];
  while (stack.length > 0) {
    const relDir = stack.pop()!;
    const names = (await readdir(absoluteBytes(root, relDir), { encoding: 'buffer' })).sort(Buffer.compare);
    const dirs: Buffer[] = [];
    for (const name of names) {
      const rel = relDir.length === 0 ? name : Buffer.concat([relDir, SLASH, name]);
      const abs = absoluteBytes(root, rel);
      const stats = await lstat(abs);
      const type = typeOf(stats);
      const entry: TreeEntry = {
        rel,
        type,
        size: type === 'file' ? stats.size : 0,
        mode: stats.mode & 0o7777,
        ino: stats.ino,
        mtimeMs: stats.mtimeMs,
        ...(type === 'symlink' ? { target: await readlink(abs, { encoding: 'buffer' }) } : {}),
      };
      yield entry;
      if (type === 'dir') dirs.push(rel);
    }
    // Reverse so that popping visits directories in sorted order.
    for (let i = dirs.length - 1; i >= 0; i--) stack.push(dirs[i]!);
  }
}

/** Encodes a byte path for JSON: UTF-8 text when it round-trips, else base64 (`b64:` prefix). */
export function encodePath(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) && !text.startsWith('b64:') ? text : `b64:${bytes.toString('base64')}`;
}

/** Inverse of `encodePath`. */
export function decodePath(encoded: string): Buffer {
  return encoded.startsWith('b64:') ? Buffer.from(encoded.slice(4), 'base64') : Buffer.from(encoded, 'utf8');
}

/** POSIX-joins a root and a decoded relative path (for display only). */
export function displayPath(root: string, rel: Buffer): string {
  return path.posix.join(root, rel.toString('utf8'));
}
