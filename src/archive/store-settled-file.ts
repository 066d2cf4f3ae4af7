/**
 * `storeOpenFile` for a file of up to `maxBytes` whose last change is over a second old (a first
 * persist's larger files; a turn's written a while before it ends), with one trip to the thread
 * pool instead of a dozen: the write barrier (tree/write-barrier.ts, on ext4 and xfs) is awaited,
 * then the stat, the read, the stat again and the store run synchronously, as a small file's do
 * (store-small-file-sync.ts). A walk that kept the event loop between those trips waited for its
 * larger files at every directory's end: 359 files over 64 KiB were half of a 10,000-file first
 * persist (BENCHMARKS.md, run T).
 *
 * The rules are `storeOpenFile`'s for such a file, in its order: every `write(2)` begun before the
 * barrier has finished copying once it answers; one begun after it sets the ctime as it begins,
 * which the stat before the read (then the file is young) or the one after it (changed while
 * read) sees. Nothing is followed (`O_NOFOLLOW`; the open descriptor is what is read and what the
 * barrier names). Whatever this path does not take answers `careful`, and the caller stores the
 * file the streaming way, which reads it twice when young and waits out a write just begun:
 * a file changed less than a second ago, sparse, over `maxBytes`, or changed while it was read.
 *
 * An open error is thrown as it is, the caller's to classify; anything failing after the open is
 * thrown typed (`StorageError`), as for a small file.
 */
import { closeSync, fstatSync, openSync, type BigIntStats } from 'node:fs';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import { StorageError } from '../errors/storage-error.js';
import { isSparse } from '../tree/copy-file-data.js';
import { READ_FILE_FLAGS, type DirHandle } from '../tree/dir-handle.js';
import { writesDone } from '../tree/write-barrier.js';
import type { ObjectStore } from './object-store.js';
import { changedWhileRead, SETTLE_NS, WRITE_BARRIER_MS, type OpenFileOutcome } from './store-open-file.js';
import { readWhole } from './store-small-file-sync.js';

export type SettledFileOutcome = OpenFileOutcome | { readonly kind: 'careful' };

export interface SettledFileOptions {
  readonly store: Pick<ObjectStore, 'putBytesSync'>;
  /** Largest file stored here; a larger one answers `careful`. */
  readonly maxBytes: number;
  /** The workspace path, named by a storage error instead of the store's temporary. */
  readonly label: string;
  /** The file's filesystem holds a write(2)'s inode lock for its whole copy: wait for writes under way first. */
  readonly writeLock: boolean;
}

/** Opens `name` beneath `dir` (throws the open's error as it is) and stores it when settled. */
export async function storeSettledFile(dir: DirHandle, name: Buffer, options: SettledFileOptions): Promise<SettledFileOutcome> {
  const fd = openSync(dir.entry(name), READ_FILE_FLAGS);
  try {
    let before = fstatSync(fd, { bigint: true });
    if (!before.isFile()) return { kind: 'vanished' };
    if (!takes(before, options.maxBytes)) return { kind: 'careful' };
    if (options.writeLock) {
      if (!(await writesDone(fd, `${before.dev}:${before.ino}`, WRITE_BARRIER_MS))) return { kind: 'unstable', ctimeNs: before.ctimeNs };
      before = fstatSync(fd, { bigint: true });
      if (!before.isFile()) return { kind: 'vanished' };
      if (!takes(before, options.maxBytes)) return { kind: 'careful' };
    }
    const bytes = readWhole(fd, Number(before.size), 0);
    if (bytes.length !== Number(before.size) || changedWhileRead(before, fstatSync(fd, { bigint: true }))) return { kind: 'careful' };
    try {
      return { kind: 'stored', stored: options.store.putBytesSync(bytes), before };
    } catch (error) {
      throw error instanceof StorageError ? classifyStorageError(error.cause, 'persist store', options.label) : error;
    }
  } catch (error) {
    // Past the open, a failure is the persist's, typed (the caller tells open failures apart by their class).
    throw classifyStorageError(error, 'persist read', options.label);
  } finally {
    closeSync(fd);
  }
}

// Whether this path takes a file with `stats` now: at most `maxBytes`, not sparse, last changed over SETTLE_NS ago.
function takes(stats: BigIntStats, maxBytes: number): boolean {
  const now = BigInt(Date.now()) * 1_000_000n;
  return stats.size <= BigInt(maxBytes) && !isSparse(stats) && now - stats.mtimeNs >= SETTLE_NS && now - stats.ctimeNs >= SETTLE_NS;
}
