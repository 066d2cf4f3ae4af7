/**
 * Pieces shared by the two writers of a revision as a pax tar straight from the archive: the
 * Vercel import packer (providers/vercel/pack-revision.ts) and the local restore through the
 * host's `tar -x` (extract-revision.ts).
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { Transform } from 'node:stream';
import type { Headers as TarHeaders } from 'tar-stream';
import { StorageIoError } from '../errors/storage-io-error.js';
import { storedMtimeNs } from '../tree/file-times.js';
import type { ObjectStore } from './object-store.js';

/** tar-stream's headers with the pax records it writes (its types lack them). */
export type TarEntryHeaders = TarHeaders & { pax?: Record<string, string> };

/** What a tar-stream header cannot carry exactly: a name or target that is not UTF-8, a time before 1970. */
export class NotRepresentable extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `bytes` as a header string, or `NotRepresentable`. */
export function tarText(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new NotRepresentable();
  }
}

// A nanosecond time as a pax decimal (`1700000000.123456789`); times before 1970 are not written here.
function paxTime(ns: bigint): string {
  if (ns < 0n) throw new NotRepresentable();
  const whole = ns / 1_000_000_000n;
  const frac = ns % 1_000_000_000n;
  return frac === 0n ? String(whole) : `${whole}.${String(frac).padStart(9, '0')}`;
}

/** The ustar time field and the exact time Node would have set, in a pax record (as GNU tar records it). */
export function tarTimed(ns: bigint): Pick<TarEntryHeaders, 'mtime' | 'pax'> {
  const stored = storedMtimeNs(ns);
  return { mtime: new Date(Number(stored / 1_000_000n)), pax: { mtime: paxTime(stored) } };
}

/** Bytes gathered before they are passed on (`coalescer`). */
const COALESCE_BYTES = 256 * 1024;

/**
 * Joins tar-stream's small pieces (a 512-byte header, a kilobyte of content, its padding) into
 * chunks of `COALESCE_BYTES`: every write into a zlib stream or a pipe is a round trip through
 * the thread pool or a system call, and one per piece made the writer wait on them.
 */
export function coalescer(): Transform {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= COALESCE_BYTES) {
        this.push(Buffer.concat(pending, pendingBytes));
        pending = [];
        pendingBytes = 0;
      }
      callback();
    },
    flush(callback) {
      if (pendingBytes > 0) this.push(Buffer.concat(pending, pendingBytes));
      callback();
    },
  });
}

/**
 * A small object read whole, synchronously (a few microseconds from the page cache, where each
 * round trip through the thread pool costs more than the read). An object of another size than
 * `size` (the tree's) fails with `StorageIoError`.
 */
export function readSmallObject(store: ObjectStore, object: string, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size + 1);
  readSmallObjectInto(store, object, size, buffer, 0);
  return buffer.subarray(0, size);
}

/**
 * `readSmallObject` into `target` at `offset`, which has room for `size + 1` bytes (the byte past
 * the content shows an object longer than its tree says).
 */
export function readSmallObjectInto(store: ObjectStore, object: string, size: number, target: Buffer, offset: number): void {
  store.readSmallInto(object, size, target, offset, () => readLooseObjectInto(store, object, size, target, offset));
}

// `readSmallObjectInto` from the object's own file.
function readLooseObjectInto(store: ObjectStore, object: string, size: number, target: Buffer, offset: number): void {
  const path = store.objectPath(object);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  let read = 0;
  try {
    for (let n = -1; n !== 0 && read < size + 1; read += n) {
      const asked = size + 1 - read;
      n = readSync(fd, target, offset + read, asked, null);
      // A read of a regular file comes back short only at its end: one that stops exactly at the
      // tree's size has seen the end, and the read that would answer 0 is not made (a system call
      // per object: 0.95–0.97 of a restore's time; BENCHMARKS.md, run AG). A longer object still
      // fills the byte past the content; a shorter one is read to its end as before.
      if (n < asked && read + n === size) {
        read = size;
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
  if (read !== size) throw shortObject(path, read, size);
}

function shortObject(path: string, held: number, size: number): StorageIoError {
  return new StorageIoError({ operation: 'restore read', path, errno: 'EIO' }, `object holds ${held > size ? `more than ${size}` : held} bytes, its tree says ${size}`);
}
