/**
 * Walks a tree without ever following a symlink (lstat only), with names as raw bytes so that
 * invalid UTF-8, newlines and leading dashes survive exactly. Yields entries in a stable order
 * (parents before children, names sorted bytewise).
 */
import { readdir, readlink } from 'node:fs/promises';
import { lstat as lstatCallback, type BigIntStats } from 'node:fs';
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
  /** Modification time in nanoseconds, exact (what rsync's `--modify-window=-1` compares). */
  readonly mtimeNs: bigint;
  /** Symlink target as bytes. */
  readonly target?: Buffer;
}

// Maps lstat results to entry types.
function typeOf(stats: BigIntStats): EntryType {
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

/**
 * How many lstat calls of one directory are in flight at once. Serial lstat leaves libuv's
 * thread pool (4 threads) idle between calls; 16 keeps it busy without flooding it (a directory
 * of 100k names must not queue 100k requests at once).
 */
const LSTAT_CONCURRENCY = 16;

// lstat through the callback API: about a third cheaper per call than fs/promises (which allocates a stats array per request).
// BigInt stats carry the exact nanosecond mtime (a double in milliseconds rounds it).
function lstat(file: Buffer): Promise<BigIntStats> {
  return new Promise((resolve, reject) => lstatCallback(file, { bigint: true }, (error, stats) => (error ? reject(error) : resolve(stats))));
}

// Describes one path (lstat, plus readlink for symlinks); `prefix` is the root and a slash, as bytes.
async function describeEntry(prefix: Buffer, rel: Buffer): Promise<TreeEntry> {
  const abs = Buffer.concat([prefix, rel]);
  const stats = await lstat(abs);
  const type = typeOf(stats);
  return {
    rel,
    type,
    size: type === 'file' ? Number(stats.size) : 0,
    mode: Number(stats.mode & 0o7777n),
    ino: Number(stats.ino),
    mtimeMs: Number(stats.mtimeMs),
    mtimeNs: stats.mtimeNs,
    ...(type === 'symlink' ? { target: await readlink(abs, { encoding: 'buffer' }) } : {}),
  };
}

// Errors of a path that was removed (or replaced by a non-directory) while the walk ran.
const VANISHED = new Set(['ENOENT', 'ENOTDIR']);
const vanished = (error: unknown) => VANISHED.has((error as NodeJS.ErrnoException).code ?? '');

// Describes the sorted names of one directory, `LSTAT_CONCURRENCY` at a time, in name order.
async function describeDirectory(prefix: Buffer, relDir: Buffer, names: readonly Buffer[], skipVanished: boolean): Promise<TreeEntry[]> {
  const entries = new Array<TreeEntry | null>(names.length);
  let next = 0;
  const lane = async () => {
    while (next < names.length) {
      const i = next++;
      const name = names[i]!;
      const describing = describeEntry(prefix, relDir.length === 0 ? name : Buffer.concat([relDir, SLASH, name]));
      entries[i] = skipVanished ? await describing.catch((error: unknown) => (vanished(error) ? null : Promise.reject(error))) : await describing;
    }
  };
  await Promise.all(Array.from({ length: Math.min(LSTAT_CONCURRENCY, names.length) }, lane));
  return entries.filter((e): e is TreeEntry => e !== null);
}

export interface WalkOptions {
  /**
   * Skip entries and directories that disappear while the walk runs (a live tree being changed)
   * instead of failing. The root itself must still be readable.
   */
  readonly skipVanished?: boolean;
}

/** Yields every entry below `root` (not `root` itself). */
export async function* walkTree(root: string, { skipVanished = false }: WalkOptions = {}): AsyncGenerator<TreeEntry> {
  const prefix = Buffer.concat([Buffer.from(root.replace(/\/+$/, '')), SLASH]);
  const stack: Buffer[] = [Buffer.alloc(0)];
  while (stack.length > 0) {
    const relDir = stack.pop()!;
    let names: Buffer[];
    try {
      names = (await readdir(absoluteBytes(root, relDir), { encoding: 'buffer' })).sort(Buffer.compare);
    } catch (error) {
      if (skipVanished && relDir.length > 0 && vanished(error)) continue;
      throw error;
    }
    const dirs: Buffer[] = [];
    for (const entry of await describeDirectory(prefix, relDir, names, skipVanished)) {
      yield entry;
      if (entry.type === 'dir') dirs.push(entry.rel);
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
