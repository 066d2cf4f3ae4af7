/**
 * Copies one regular file from a directory handle into a new file beneath another, hashing it
 * in the same read (sparse files keep their holes), and gives it the source's stored mode and
 * mtime. The source is opened beneath its handle with `O_NOFOLLOW | O_NONBLOCK`, then checked
 * with fstat, so a name swapped for a symlink, FIFO or device since it was listed is never
 * followed, blocked on, or read.
 */
import type { FileHandle } from 'node:fs/promises';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import { copyFileData, isSparse } from '../tree/copy-file-data.js';
import { CREATE_FILE_FLAGS, READ_FILE_FLAGS, type DirHandle } from '../tree/dir-handle.js';
import { setFileTime } from '../tree/file-times.js';
import { storedMode } from './stored-mode.js';
import { encodePath, vanished } from './tree-walk.js';

/** Source errors that refuse one entry (it keeps its previous state) instead of failing the persist. */
export const UNREADABLE = new Set(['EACCES', 'EPERM', 'EIO', 'EOVERFLOW', 'ENAMETOOLONG', 'EINVAL']);

/** What a copy made: the manifest facts of the new file. */
export interface CopiedEntry {
  readonly m: number;
  readonly s: number;
  readonly h: string;
  readonly i: number;
  readonly n: string;
}

export type CopyOutcome =
  | { readonly kind: 'copied'; readonly entry: CopiedEntry }
  /** Gone, or no longer a regular file. */
  | { readonly kind: 'vanished' }
  | { readonly kind: 'unreadable'; readonly errno: string }
  | { readonly kind: 'too-large'; readonly bytes: bigint };

export interface CopyEntryOptions {
  readonly maxBytes: number;
  readonly signal: AbortSignal;
}

/** Copies `name` of `from` to `name` in `to`; `rel` names it in errors. Failures on the `to` side throw typed. */
export async function copyEntry(from: DirHandle, to: DirHandle, name: Buffer, rel: Buffer, { maxBytes, signal }: CopyEntryOptions): Promise<CopyOutcome> {
  let source: FileHandle;
  try {
    source = await from.openFile(name, READ_FILE_FLAGS);
  } catch (error) {
    if (vanished(error)) return { kind: 'vanished' };
    const errno = errnoOf(error) ?? '';
    if (UNREADABLE.has(errno)) return { kind: 'unreadable', errno };
    throw classifyStorageError(error, 'persist read', encodePath(rel));
  }
  try {
    const stats = await source.stat({ bigint: true });
    // Swapped for a FIFO, device or directory since it was listed.
    if (!stats.isFile()) return { kind: 'vanished' };
    if (stats.size > BigInt(maxBytes)) return { kind: 'too-large', bytes: stats.size };
    const mode = storedMode(stats.mode & 0o7777n);
    let out: FileHandle;
    try {
      out = await to.openFile(name, CREATE_FILE_FLAGS, 0o600);
    } catch (error) {
      throw classifyStorageError(error, 'persist create', encodePath(rel));
    }
    try {
      const data = await copyFileData(source, out, Number(stats.size), isSparse(stats), signal);
      await out.chmod(mode);
      await setFileTime(out, stats.mtimeNs);
      const { ino } = await out.stat({ bigint: true });
      return { kind: 'copied', entry: { m: mode, s: data.bytes, h: data.hash, i: Number(ino), n: stats.mtimeNs.toString() } };
    } catch (error) {
      throw classifyStorageError(error, 'persist copy', encodePath(rel));
    } finally {
      await out.close();
    }
  } finally {
    await source.close();
  }
}
