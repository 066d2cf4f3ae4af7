/**
 * Lists and describes one directory of a source tree beneath its handle: names (at most what the
 * entry limit leaves), then an lstat (and readlink for symlinks) of each, but for the regular
 * files a caller claims (`unseen`: it will open them and stat the descriptor). These calls are made
 * synchronously, yielding to the event loop every few hundred entries: on a cached inode one
 * lstat costs a few microseconds, less than a thread-pool round trip, and the walk of a persist
 * is made of little else (measured: a 10,000-file walk with no change, 630 → 430 ms median). Entries
 * that vanish meanwhile are dropped and counted; unreadable ones are refused. `keepAll` says the
 * listing is incomplete (more names than the limit left), so a builder keeps previous entries it
 * lacks.
 */
import type { BigIntStats } from 'node:fs';
import { setImmediate } from 'node:timers/promises';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import type { DirHandle } from '../tree/dir-handle.js';
import { UNREADABLE } from './copy-entry.js';
import { keyOf } from './prior-index.js';
import { childRel, encodePath, vanished } from './tree-walk.js';
import type { WalkTally } from './walk-tally.js';

/** One entry of a source directory. */
export interface LiveItem {
  readonly name: Buffer;
  /** The name's bytes as a latin1 string (sorts bytewise). */
  readonly key: string;
  readonly stats: BigIntStats;
  readonly target?: Buffer;
}

export interface DescribedDirectory {
  readonly items: LiveItem[];
  /** Names `known` vouched for: listed, not stat'ed (the caller takes them as recorded). */
  readonly known: { readonly name: Buffer; readonly key: string }[];
  /** Names the listing says are regular files that `unseen` claimed: not stat'ed (the caller opens them). */
  readonly toOpen: { readonly name: Buffer; readonly key: string }[];
  /** Keys of entries refused as unreadable (their previous state is kept). */
  readonly refused: ReadonlySet<string>;
  readonly keepAll: boolean;
}

export interface DescribeOptions {
  /**
   * Vouches for names whose entry is what the caller already recorded: those are listed but not
   * stat'ed (a persist that knows from the change scan which entries changed).
   */
  readonly known?: (name: Buffer, key: string) => boolean;
  /**
   * The directory's names, sorted bytewise, as the caller knows them (a directory the change scan
   * says did not change): they are not read again. A name gone since is dropped as vanished, like
   * one that goes between the listing and its lstat.
   */
  readonly listed?: readonly Buffer[];
  /**
   * Claims a name the listing says is a regular file, when the caller compares it with nothing
   * (no previous entry under that name): it is not stat'ed but returned in `toOpen`, and the
   * caller learns what it is from the descriptor it opens (one lstat a file fewer in a first persist).
   */
  readonly unseen?: (key: string) => boolean;
}

/** Entries described between two yields to the event loop (timers, lock renewals, aborts). */
const YIELD_EVERY = 512;

export async function describeSource(src: DirHandle, rel: Buffer, tally: WalkTally, maxEntries: number, { known, listed, unseen }: DescribeOptions = {}): Promise<DescribedDirectory> {
  const refused = new Set<string>();
  const regular = unseen && !listed ? new Set<Buffer>() : undefined;
  let names: readonly Buffer[] & { truncated?: boolean };
  try {
    names = listed ?? src.namesSync(Math.max(0, maxEntries - tally.walked), regular);
  } catch (error) {
    if (!vanished(error)) throw classifyStorageError(error, 'persist read', encodePath(rel) || '.');
    names = [];
  }
  if (names.truncated) tally.refuse('entries', rel, `directory has more entries than the ${maxEntries}-entry limit leaves; the rest were not read`);
  const items: LiveItem[] = [];
  const vouched: { name: Buffer; key: string }[] = [];
  const toOpen: { name: Buffer; key: string }[] = [];
  for (let i = 0; i < names.length; i++) {
    if (i > 0 && i % YIELD_EVERY === 0) await setImmediate();
    const name = names[i]!;
    if (known || regular) {
      const key = keyOf(name);
      if (known?.(name, key)) {
        vouched.push({ name, key });
        continue;
      }
      if (regular?.has(name) && unseen!(key)) {
        toOpen.push({ name, key });
        continue;
      }
    }
    try {
      const stats = src.lstatSync(name);
      items.push({ name, key: keyOf(name), stats, ...(stats.isSymbolicLink() ? { target: src.readlinkSync(name) } : {}) });
    } catch (error) {
      if (vanished(error)) {
        tally.vanished += 1;
        continue;
      }
      if (UNREADABLE.has(errnoOf(error) ?? '')) {
        tally.refuse('unreadable', childRel(rel, name), `cannot be read (${errnoOf(error)})`);
        refused.add(keyOf(name));
        continue;
      }
      throw classifyStorageError(error, 'persist read', encodePath(childRel(rel, name)));
    }
  }
  return { items, known: vouched, toOpen, refused, keepAll: names.truncated === true };
}
