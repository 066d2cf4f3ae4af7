/**
 * One changed file of a live tree into the store, from an open handle: stat, copy into the
 * store (hashed as it is read), stat again. A file whose size, mtime or ctime moved meanwhile is
 * read again, up to `READ_ATTEMPTS` times, then reported unstable (the caller keeps its previous
 * version). A file written in the second before it is read is read a second time and kept only
 * when both reads agree: the kernel sets mtime when a write(2) begins, so a read racing one long
 * write sees the same stat before and after, and bytes of two versions. Two reads in a row cannot
 * see a write that is stalled mid-copy (its writer descheduled on a busy machine): both give the
 * same half-written bytes. So a file whose last change began less than `WRITE_STALL_NS` ago is
 * not read until that long after it (`stallWaitMs`, within the walk's budget, write-waits.ts).
 * Where the filesystem holds a write's inode lock for its whole copy (ext4, xfs: `writeLock`,
 * tree/write-barrier.ts), each read then also waits for writes under way to finish, and the
 * second read of a young file for any that began during the first: no single write(2), however
 * long it stalls, is read half-done (one still copying after `WRITE_BARRIER_MS` leaves the file
 * unstable this time). Elsewhere a torn read needs a write(2) stalled for longer than the wait.
 */
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import { StorageError } from '../errors/storage-error.js';
import { isSparse } from '../tree/copy-file-data.js';
import { hashFileData } from '../tree/hash-file-data.js';
import type { ObjectStore, StoredObject } from './object-store.js';
import type { WriteWaits } from './write-waits.js';
import { writesDone } from '../tree/write-barrier.js';

/** Reads of a file that keeps changing while it is read, before its previous version is kept. */
export const READ_ATTEMPTS = 3;
/**
 * How long after its mtime a file may still have a write(2) copying into it: a file this young
 * is read twice. One second covers a single write of hundreds of MB and a coarse clock.
 */
export const SETTLE_NS = 1_000_000_000n;
/**
 * How long a write(2) that began may still be copying into a file on a busy machine (a writer
 * descheduled mid-copy): a file whose ctime is younger is read only once it is this old. Measured
 * by ctime, which a sandbox cannot set (an mtime in the future costs only a double read).
 */
export const WRITE_STALL_NS = 100_000_000n;
/**
 * Longest a read waits for a write(2) under way to finish copying (`writeLock`); a write still
 * copying then leaves the file unread this time (`unstable`: its previous version is kept, and
 * the next persist takes it).
 */
export const WRITE_BARRIER_MS = 1_000;

/**
 * How long to wait before reading a file with `stats` at `nowNs` (0: read now): until its last
 * change is `WRITE_STALL_NS` old, never longer than that (a clock stepped back).
 */
export function stallWaitMs(stats: BigIntStats, nowNs: bigint): number {
  const left = stats.ctimeNs + WRITE_STALL_NS - nowNs;
  if (left <= 0n) return 0;
  return Math.ceil(Number(left < WRITE_STALL_NS ? left : WRITE_STALL_NS) / 1e6);
}

/**
 * `unstable`: its previous version is kept; `ctimeNs`, its ctime as last seen (a change still
 * under way was stamped at or before it, and every later one after it: the walk draws its line no
 * later, so the next persist looks at the file again, change-stamp.ts).
 */
export type OpenFileOutcome =
  | { readonly kind: 'stored'; readonly stored: StoredObject; readonly before: BigIntStats }
  | { readonly kind: 'vanished' }
  | { readonly kind: 'unstable'; readonly ctimeNs: bigint }
  | { readonly kind: 'too-large'; readonly size: bigint };

export interface OpenFileOptions {
  readonly store: ObjectStore;
  readonly maxFileBytes: number;
  /** The workspace path, named by a storage error instead of the store's temporary. */
  readonly label: string;
  readonly signal?: AbortSignal;
  /** The walk's budget for waiting on writes that may be under way; none: read at once. */
  readonly waits?: WriteWaits;
  /**
   * The file's filesystem holds a write(2)'s inode lock for its whole copy (tree/write-barrier.ts):
   * each read also waits for writes under way to finish, so no write stalled mid-copy, however
   * long, is read half-done.
   */
  readonly writeLock?: boolean;
}

/** Stores the file open at `source` (the handle stays open). */
export async function storeOpenFile(source: FileHandle, options: OpenFileOptions): Promise<OpenFileOutcome> {
  const { store, signal } = options;
  let last: BigIntStats | undefined;
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    let seenAt = BigInt(Date.now()) * 1_000_000n;
    let before = await source.stat({ bigint: true });
    if (!before.isFile()) return { kind: 'vanished' };
    // A write(2) may still be copying into it: read it once it is old enough (within the walk's
    // budget; a version written in several writes is whole by then, as far as a reader can know).
    if (options.waits && (await options.waits.wait(stallWaitMs(before, seenAt)))) {
      seenAt = BigInt(Date.now()) * 1_000_000n;
      before = await source.stat({ bigint: true });
      if (!before.isFile()) return { kind: 'vanished' };
    }
    if (options.writeLock) {
      // And whatever write(2) began before this is done copying once the barrier returns, however long it stalled.
      if (!(await writesDone(source.fd, `${before.dev}:${before.ino}`, WRITE_BARRIER_MS))) return { kind: 'unstable', ctimeNs: before.ctimeNs };
      seenAt = BigInt(Date.now()) * 1_000_000n;
      before = await source.stat({ bigint: true });
      if (!before.isFile()) return { kind: 'vanished' };
    }
    last = before;
    if (before.size > BigInt(options.maxFileBytes)) return { kind: 'too-large', size: before.size };
    // Given up as soon as a stat shows the file moved (every few MB, and once the read is done,
    // before the object is placed): a stored read is one the stat did not see move.
    const unmoved = async () => !changedWhileRead(before, await source.stat({ bigint: true }));
    const stored = await store.putObjectIfUnmoved(source, Number(before.size), isSparse(before), signal, unmoved).catch((error: unknown) => {
      throw error instanceof StorageError ? classifyStorageError(error.cause, 'persist store', options.label) : error;
    });
    if (stored === 'moved') continue;
    if (stored.bytes === Number(before.size) && (await settled(source, before, seenAt, stored.id, signal, options.writeLock === true))) {
      return { kind: 'stored', stored, before };
    }
  }
  return { kind: 'unstable', ctimeNs: last!.ctimeNs };
}

// True unless the file was written too recently to trust one read: then it must read again to the same id, its stat unmoved.
// With `writeLock`, the second read comes after every write(2) begun during the first has finished:
// the same bytes then are a version the file held whole (a write under way during the first read
// would show in the second).
async function settled(source: FileHandle, before: BigIntStats, seenAt: bigint, id: string, signal: AbortSignal | undefined, writeLock: boolean): Promise<boolean> {
  if (seenAt - before.mtimeNs >= SETTLE_NS && seenAt - before.ctimeNs >= SETTLE_NS) return true;
  if (writeLock && !(await writesDone(source.fd, `${before.dev}:${before.ino}`, WRITE_BARRIER_MS))) return false;
  const again = await hashFileData(source, Number(before.size), signal);
  const after = await source.stat({ bigint: true });
  return again.hash === id && again.bytes === Number(before.size) && !changedWhileRead(before, after);
}

// True when a file's size, mtime or ctime moved while it was read (its bytes may mix two versions).
export function changedWhileRead(before: BigIntStats, after: BigIntStats): boolean {
  return before.size !== after.size || before.mtimeNs !== after.mtimeNs || before.ctimeNs !== after.ctimeNs;
}
