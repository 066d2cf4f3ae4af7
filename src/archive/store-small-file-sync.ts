/**
 * `storeOpenFile` for a small file, without the thread pool: open beneath its directory's
 * handle, stat, read whole, stat again, hash and store, close, all as synchronous syscalls. A
 * changed file of a few KB costs about a dozen of them; as thread-pool round trips they were most
 * of a persist of many small changed files, and of every first persist (BENCHMARKS.md, "Small
 * files stored without the thread pool").
 *
 * The same rules as `storeOpenFile`: nothing followed (`O_NOFOLLOW`, and the open descriptor is
 * what is read), a file whose size, mtime or ctime moved while it was read is read again (at most
 * `READ_ATTEMPTS` times, then `unstable`), and one written in the second before it is read is
 * read a second time and kept only when both reads are the same bytes with the stat unmoved.
 *
 * Answers `large` (nothing stored, with the open file's stat) when it is over `maxBytes`, sparse,
 * or (`singleName`) has more than one name: the caller stores it the streaming way. A caller that
 * did not lstat the entry (its listing said regular file) learns what it is from that stat. Answers `fresh` (nothing stored) when `mayWait` and its last change
 * began too recently to read it (`stallWaitMs`): the caller waits `waitMs` and calls again. An
 * open error is thrown as it is, the caller's to classify (as for `openFile`); anything failing
 * after the open is thrown typed (`StorageError`), as a read or store error of the streaming path
 * fails the persist.
 */
import { closeSync, fstatSync, openSync, readSync, type BigIntStats } from 'node:fs';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import { StorageError } from '../errors/storage-error.js';
import { isSparse } from '../tree/copy-file-data.js';
import { READ_FILE_FLAGS, type DirHandle } from '../tree/dir-handle.js';
import type { ObjectStore } from './object-store.js';
import type { OpenFileOutcome } from './store-open-file.js';
import { changedWhileRead, READ_ATTEMPTS, SETTLE_NS, stallWaitMs } from './store-open-file.js';

export type SmallFileOutcome = OpenFileOutcome | { readonly kind: 'large'; readonly stats: BigIntStats } | { readonly kind: 'fresh'; readonly waitMs: number };

export interface SmallFileOptions {
  readonly store: Pick<ObjectStore, 'putBytesSync'>;
  /** Largest file stored here; a larger one answers `large`. */
  readonly maxBytes: number;
  /** The workspace path, named by a storage error instead of the store's temporary. */
  readonly label: string;
  /** Answer `fresh` for a file changed too recently to read (else it is read at once). */
  readonly mayWait?: boolean;
  /** Answer `large` for a file with more than one name (the caller reads each inode once, for all its names). */
  readonly singleName?: boolean;
}

/** Opens `name` beneath `dir` (throws the open's error as it is) and stores it when small. */
export function storeSmallFileSync(dir: DirHandle, name: Buffer, options: SmallFileOptions): SmallFileOutcome {
  const fd = openSync(dir.entry(name), READ_FILE_FLAGS);
  try {
    let last: BigIntStats | undefined;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const seenAt = BigInt(Date.now()) * 1_000_000n;
      const before = fstatSync(fd, { bigint: true });
      last = before;
      if (!before.isFile()) return { kind: 'vanished' };
      if (before.size > BigInt(options.maxBytes) || isSparse(before) || (options.singleName && before.nlink > 1n)) return { kind: 'large', stats: before };
      const waitMs = options.mayWait ? stallWaitMs(before, seenAt) : 0;
      if (waitMs > 0) return { kind: 'fresh', waitMs };
      const bytes = readWhole(fd, Number(before.size), 0);
      const after = fstatSync(fd, { bigint: true });
      if (changedWhileRead(before, after) || bytes.length !== Number(before.size)) continue;
      if (young(before, seenAt)) {
        const again = readWhole(fd, Number(before.size), 1);
        if (!again.equals(bytes) || changedWhileRead(before, fstatSync(fd, { bigint: true }))) continue;
      }
      let stored;
      try {
        stored = options.store.putBytesSync(bytes);
      } catch (error) {
        throw error instanceof StorageError ? classifyStorageError(error.cause, 'persist store', options.label) : error;
      }
      return { kind: 'stored', stored, before };
    }
    return { kind: 'unstable', ctimeNs: last!.ctimeNs };
  } catch (error) {
    // Past the open, a failure is the persist's, typed (the caller tells open failures apart by their class).
    throw classifyStorageError(error, 'persist read', options.label);
  } finally {
    closeSync(fd);
  }
}

// Whether a file was changed too recently to trust one read (see SETTLE_NS).
function young(stats: BigIntStats, seenAt: bigint): boolean {
  return seenAt - stats.mtimeNs < SETTLE_NS || seenAt - stats.ctimeNs < SETTLE_NS;
}

/**
 * Two buffers the reads go into, reused from file to file: a fresh one per read cost more than
 * the read (this runs synchronously, and nothing keeps the bytes once they are stored).
 */
const scratch: Buffer[] = [Buffer.alloc(0), Buffer.alloc(0)];

/**
 * Up to `size` bytes from the start of `fd` (fewer when the file shrank meanwhile), in scratch
 * buffer `slot`: valid until the next read into that slot, so the caller stores them before it
 * yields (store-settled-file.ts reads into slot 0 too, as synchronously).
 */
export function readWhole(fd: number, size: number, slot: 0 | 1): Buffer {
  if (scratch[slot]!.length < size) scratch[slot] = Buffer.allocUnsafe(Math.max(size, 64 * 1024));
  const bytes = scratch[slot]!.subarray(0, size);
  let read = 0;
  while (read < size) {
    const n = readSync(fd, bytes, read, size - read, read);
    if (n === 0) break;
    read += n;
  }
  return read === size ? bytes : bytes.subarray(0, read);
}
