/**
 * File times through Node, which takes seconds as a double: libuv turns the double into a
 * timespec (`tv_sec = t; tv_nsec = (t - tv_sec) * 1e9`) and then drops the sub-microsecond part
 * ("for consistency with other platforms"), so what lands on disk is the nanosecond time cut to
 * whole microseconds. `storedMtimeNs` computes exactly that value, so a quick check recognises a
 * file whose time came from the archive (after a restore) as unchanged. Should a later libuv keep
 * nanoseconds, a restored file is merely copied once more: never a missed change.
 */
import type { FileHandle } from 'node:fs/promises';

const NS_PER_S = 1_000_000_000n;

/** The double Node is given for a nanosecond time. */
const secondsOf = (ns: bigint) => Number(ns) / 1e9;

/** The nanosecond time a file gets when Node sets `ns` (libuv's double → timespec conversion, µs cut). */
export function storedMtimeNs(ns: bigint): bigint {
  const t = secondsOf(ns);
  let sec = Math.trunc(t);
  let nsec = Math.trunc((t - sec) * 1e9);
  // libuv's order: the µs cut (C's `%` keeps the sign), then a negative fraction is borrowed from the seconds.
  nsec -= nsec % 1000;
  if (nsec < 0) {
    nsec += 1e9;
    sec -= 1;
  }
  return BigInt(sec) * NS_PER_S + BigInt(nsec);
}

/**
 * True when `copy` is the time `original`, exactly or as Node stores it: a restored live file
 * carries the stored form of the time its manifest recorded, and a revision file written by Node
 * carries the stored form of the live file's time. (Not symmetric: the conversion goes through a
 * double, so `storedMtimeNs` of an already-stored time can differ from it.)
 */
export function sameMtime(copy: bigint, original: bigint): boolean {
  return copy === original || copy === storedMtimeNs(original);
}

/**
 * The time argument Node's utimes family is given for `ns`. Node replaces a negative number by
 * the current time (`toUnixTimestamp`), so a time before 1970 is passed as its decimal string,
 * which Node converts without that check: the file gets the time it had, not the time of the copy.
 */
export function nodeTime(ns: bigint): number | string {
  const t = secondsOf(ns);
  return t < 0 ? String(t) : t;
}

/** Sets atime and mtime of an open file to `mtimeNs` (as Node stores it). */
export async function setFileTime(handle: FileHandle, mtimeNs: bigint): Promise<void> {
  const t = nodeTime(mtimeNs);
  await handle.utimes(t, t);
}
