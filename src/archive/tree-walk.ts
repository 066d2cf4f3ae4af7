/**
 * Walks a tree by directory handles (`DirHandle`): every directory is opened beneath its parent
 * with `O_NOFOLLOW`, every entry is described with `lstat` beneath its directory, so no symlink
 * is followed on any component and no path string grows with depth (trees deeper than PATH_MAX
 * walk fine). Names are raw bytes, so invalid UTF-8, newlines and leading dashes survive exactly.
 * Yields entries in a stable order: a directory's entries (names sorted bytewise), then each
 * subdirectory's, in name order.
 */
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { isAscii, isUtf8 } from 'node:buffer';
import path from 'node:path';
import { mapBounded } from '../lib/map-bounded.js';
import { DirHandle, READ_FILE_FLAGS } from '../tree/dir-handle.js';

export type EntryType = 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'other';

export interface TreeEntry {
  /** Path relative to the root, as bytes ('/'-separated). */
  readonly rel: Buffer;
  /** Last path component. */
  readonly name: Buffer;
  readonly type: EntryType;
  readonly size: number;
  /** Permission bits (0o7777). */
  readonly mode: number;
  readonly ino: number;
  readonly nlink: number;
  readonly mtimeMs: number;
  /** Modification time in nanoseconds, exact. */
  readonly mtimeNs: bigint;
  /** Symlink target as bytes. */
  readonly target?: Buffer;
  /**
   * Opens this entry (a file) for reading beneath its directory, without following anything.
   * Valid only until the walk resumes (the directory handle is closed later).
   */
  open(): Promise<FileHandle>;
}

/** Maps lstat results to entry types. */
export function typeOf(stats: BigIntStats): EntryType {
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

/** `parent/name` as bytes (`name` alone at the root). */
export function childRel(parent: Buffer, name: Buffer): Buffer {
  return parent.length === 0 ? name : Buffer.concat([parent, SLASH, name]);
}

/**
 * How many lstat calls of one directory are in flight at once. Serial lstat leaves libuv's
 * thread pool (4 threads) idle between calls; 16 keeps it busy without flooding it (a directory
 * of 100k names must not queue 100k requests at once).
 */
export const LSTAT_CONCURRENCY = 16;

// Errors of a path that was removed, or replaced by a non-directory, while the walk ran; or, for
// an open of what was a regular file, replaced by a socket or a device (ENXIO, ENODEV): a sandbox
// can swap one in between a listing and the open, and that must not fail the persist.
const VANISHED = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENXIO', 'ENODEV']);
/** True for an error that means the entry is gone or is no longer what it was. */
export const vanished = (error: unknown) => VANISHED.has((error as NodeJS.ErrnoException).code ?? '');

// Describes one entry of an open directory (lstat, plus readlink for symlinks).
async function describeEntry(dir: DirHandle, relDir: Buffer, name: Buffer): Promise<TreeEntry> {
  const stats = await dir.lstat(name);
  const type = typeOf(stats);
  return {
    rel: childRel(relDir, name),
    name,
    type,
    size: type === 'file' ? Number(stats.size) : 0,
    mode: Number(stats.mode & 0o7777n),
    ino: Number(stats.ino),
    nlink: Number(stats.nlink),
    mtimeMs: Number(stats.mtimeMs),
    mtimeNs: stats.mtimeNs,
    ...(type === 'symlink' ? { target: await dir.readlink(name) } : {}),
    open: () => dir.openFile(name, READ_FILE_FLAGS),
  };
}

// Describes the sorted names of one directory, `LSTAT_CONCURRENCY` at a time, in name order.
async function describeDirectory(dir: DirHandle, relDir: Buffer, skipVanished: boolean): Promise<TreeEntry[]> {
  const names = await dir.names();
  const entries = await mapBounded(names, LSTAT_CONCURRENCY, (name) => {
    const describing = describeEntry(dir, relDir, name);
    return skipVanished ? describing.catch((error: unknown) => (vanished(error) ? null : Promise.reject(error))) : describing;
  });
  return entries.filter((e): e is TreeEntry => e !== null);
}

export interface WalkOptions {
  /**
   * Skip entries and directories that disappear (or turn into something else) while the walk
   * runs instead of failing. The root itself must still be readable.
   */
  readonly skipVanished?: boolean;
}

interface Frame {
  readonly dir: DirHandle;
  readonly rel: Buffer;
  readonly subdirs: Buffer[];
  next: number;
}

/** Yields every entry below `root` (not `root` itself, which must be a real directory). */
export async function* walkTree(root: string | DirHandle, { skipVanished = false }: WalkOptions = {}): AsyncGenerator<TreeEntry> {
  const owned = typeof root === 'string';
  const top = owned ? await DirHandle.open(root) : root;
  const frames: Frame[] = [];
  try {
    const enter = async function* (dir: DirHandle, rel: Buffer): AsyncGenerator<TreeEntry> {
      const frame: Frame = { dir, rel, subdirs: [], next: 0 };
      frames.push(frame);
      for (const entry of await describeDirectory(dir, rel, skipVanished)) {
        yield entry;
        if (entry.type === 'dir') frame.subdirs.push(entry.name);
      }
    };
    yield* enter(top, Buffer.alloc(0));
    while (frames.length > 0) {
      const frame = frames.at(-1)!;
      if (frame.next >= frame.subdirs.length) {
        frames.pop();
        if (frame.dir !== top) await frame.dir.close();
        continue;
      }
      const name = frame.subdirs[frame.next++]!;
      let child: DirHandle;
      try {
        child = await frame.dir.openDir(name);
      } catch (error) {
        if (skipVanished && vanished(error)) continue;
        throw error;
      }
      // `enter` puts the child on the frame stack first: from here on it is closed with its frame.
      yield* enter(child, childRel(frame.rel, name));
    }
  } finally {
    for (const frame of frames) if (frame.dir !== top) await frame.dir.close();
    if (owned) await top.close();
  }
}

/** Encodes a byte path for JSON: UTF-8 text when it round-trips, else base64 (`b64:` prefix). */
export function encodePath(bytes: Buffer): string {
  // Valid UTF-8 (ASCII included) decodes and encodes back to the same bytes; nothing else does.
  if (isUtf8(bytes)) {
    const text = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
    if (!text.startsWith('b64:')) return text;
  }
  return `b64:${bytes.toString('base64')}`;
}

/** Inverse of `encodePath`. */
export function decodePath(encoded: string): Buffer {
  return encoded.startsWith('b64:') ? Buffer.from(encoded.slice(4), 'base64') : Buffer.from(encoded, 'utf8');
}

/** POSIX-joins a root and a decoded relative path (for display only). */
export function displayPath(root: string, rel: Buffer): string {
  return path.posix.join(root, rel.toString('utf8'));
}
