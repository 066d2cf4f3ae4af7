/**
 * Which directories of a live tree a persist must walk, from one `find` over the tree (a C
 * program stat'ing every entry costs a fraction of the walk's per-entry JavaScript): those that
 * hold, at any depth, an entry whose status changed (ctime) after a moment the previous walk
 * covered. Every other directory is, name for name and byte for byte, what that walk recorded,
 * and its previous tree is taken by id without being opened.
 *
 * Why ctime: the kernel sets it to the current time on every change of an inode (content,
 * mode, owner, link count, rename) and nothing in a sandbox can set it back (`utimensat` sets
 * mtime and atime only; the clock needs CAP_SYS_TIME). A file written, chmodded, linked or
 * renamed, and a directory whose entries were added, removed or renamed, all get a new ctime.
 *
 * What `find` says only ever adds work: it names paths to walk, and the walk itself is the
 * handle-based one, so nothing here reads through the tree. Anything unexpected (a non-zero
 * exit, a message on stderr, a vanished entry, more records than the entry limit, the deadline)
 * answers null and the persist walks everything, as before. Its output is held up to 64 MiB.
 */
import { runCommand } from '../lib/run-command.js';
import type { DirHandle } from '../tree/dir-handle.js';
import { ScanListing } from './scan-listing.js';
import { anySignal } from '../lib/any-signal.js';
import { HelperCallFailed, shellHelpers } from '../lib/shell-helpers.js';

/**
 * The longest a tree goes without a walk of every directory: whatever a change scan could miss
 * (a filesystem that keeps no ctime, a clock stepped back and forward again) is found within it.
 */
export const FULL_WALK_EVERY_MS = 10 * 60_000;
/** The descriptor the tree's root is given to `find` as (runCommand passes `fds` from 3 on). */
const CHILD_ROOT_FD = 3;
/** Longest the scan may take before the persist walks everything instead. */
const SCAN_DEADLINE_MS = 120_000;
/** Most bytes of `find` output held: past it the persist walks everything (a tree changed throughout costs that walk anyway). */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export interface ChangedDirs {
  /** Whether nothing of the tree changed (the root holds no change and did not change itself). */
  readonly rootClean: boolean;
  /**
   * Whether the directory at `rel` holds no changed entry and did not change itself. When its
   * parent is the very directory the previous walk recorded at that path (see `changedEntry`),
   * it and everything below it are what that walk recorded.
   */
  reusable(rel: Buffer): boolean;
  /**
   * Whether the entry at `rel` changed since that walk (its ctime is after the moment it covers).
   * An entry that did not, in a directory that is the one that walk recorded at that path, is the
   * inode that walk recorded under that name, as it was: writing, chmod, linking and renaming an
   * inode all set its ctime, so no other inode can have come to that name without being listed.
   * The condition on the directory matters: a directory moved over another gets a new ctime, but
   * the entries it carries keep theirs, and they are not the entries the replaced one held. So
   * the root is that walk's directory, and a directory is when its parent is and it did not
   * change; a directory that did not change also holds the names that walk listed, no more.
   */
  changedEntry(rel: Buffer): boolean;
  /** Entries whose status changed, as `find` listed them. */
  readonly changedEntries: number;
}

/** The directories to walk, from a whole scan's records `<type> <path>\0` (pure; exported for tests). */
export const changedDirsOf = (output: Buffer): ChangedDirs => ScanListing.of(output);

export interface ChangedDirsOptions {
  /** Entries whose ctime is after this (ns since the epoch) are changed. */
  readonly sinceNs: bigint;
  /** More changed entries than this: walk everything (the walk applies the entry limit). */
  readonly maxRecords: number;
  /** PATH that finds `find`. */
  readonly systemPath: string;
  readonly signal: AbortSignal;
  /** Longest the scan may take before the persist walks everything instead. @default SCAN_DEADLINE_MS */
  readonly deadlineMs?: number;
}

/**
 * The scan's expression after its root: an entry whose status changed after `time` as `%y
 * <path>`, any other directory as `u <path>` (what tells a reader the scan has left a directory:
 * scan-listing.ts). The shell helper runs the same (lib/shell-helpers.ts).
 */
export const SCAN_EXPRESSION = (time: string): string[] => ['(', '-newerct', time, '-printf', '%y %P\\0', ')', '-o', '(', '-type', 'd', '-printf', 'u %P\\0', ')'];

/** The ctime seconds `find -newerct` takes: `@<s>.<9 digits>`. */
export const findTime = (ns: bigint): string => `@${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}`;

/**
 * Failed scans in a row of a shell helper that the same scan by a process of its own then
 * completed: past this many, this process stops asking the helpers (one that cannot read this
 * process's descriptors through `/proc/<pid>/fd` would fail every time).
 */
const HELPER_MISSES_TRUSTED = 3;
let helperMisses = 0;

/** What `find` printed, read as it comes; `overflow` past the record or byte limit (the listing then fails). */
class Records {
  readonly listing = new ScanListing();
  bytes = 0;
  overflow = false;

  constructor(readonly maxRecords: number) {}

  /** Takes a chunk; false once over a limit (the scan stops). */
  push(chunk: Buffer): boolean {
    if (this.overflow) return false;
    this.bytes += chunk.length;
    this.listing.push(chunk);
    if (this.listing.records > this.maxRecords || this.bytes > MAX_OUTPUT_BYTES) {
      this.overflow = true;
      this.listing.fail();
    }
    return !this.overflow;
  }

  /** The listing when the scan ended as it should; null (and the listing failed) otherwise. */
  settle(complete: boolean): ScanListing | null {
    if (complete && !this.overflow) {
      this.listing.end();
      return this.listing;
    }
    this.listing.fail();
    return null;
  }
}

/** A change scan under way. */
export interface ChangeScan {
  /** What it has said so far: a walk may begin at once (scan-listing.ts). */
  readonly listing: ScanListing;
  /**
   * Its answer once it ends: `listing`, complete, when it ran as it should; else null (walk
   * everything) or the listing of the scan made again by a `find` of its own (a walk that read
   * `listing` walks again with that answer).
   */
  readonly finished: Promise<ChangedDirs | null>;
}

/**
 * Starts the scan of the tree whose root `root` is. `find` runs in a long-lived shell helper
 * (lib/shell-helpers.ts: a fork of this process per scan cost 7–9 ms of a 10,000-file turn),
 * given the root as `/proc/<this pid>/fd/<n>`, the directory this process holds open, its output
 * unbuffered so the listing follows it record by record; when a helper's scan fails, the scan is
 * made again by a process of its own, given the descriptor itself, as it always was.
 */
export function startChangeScan(root: DirHandle, options: ChangedDirsOptions): ChangeScan {
  const records = new Records(options.maxRecords);
  const finished = (async (): Promise<ChangedDirs | null> => {
    try {
      if (helperMisses >= HELPER_MISSES_TRUSTED) return await scanInProcess(root, options, records);
      const answer = await shellHelpers(options.systemPath)
        .call(['scan', `/proc/${process.pid}/fd/${root.fd}`, findTime(options.sinceNs)], { timeoutMs: options.deadlineMs ?? SCAN_DEADLINE_MS, signal: options.signal, onStdout: (chunk) => records.push(chunk) })
        .catch((error: unknown) => (error instanceof HelperCallFailed && (error.reason === 'stopped' || error.reason === 'timeout') ? 'over' : null));
      options.signal.throwIfAborted();
      // Over a limit or the deadline: the persist walks everything, whoever ran the scan (a second scan would take as long).
      if (answer === 'over' || records.overflow) return records.settle(false);
      if (answer && answer.status === 0 && answer.said === '') {
        helperMisses = 0;
        return records.settle(true);
      }
      records.settle(false);
      const direct = await scanInProcess(root, options, new Records(options.maxRecords));
      if (direct) helperMisses += 1;
      return direct;
    } finally {
      // However the scan ended, a walk waiting on the listing goes on.
      records.listing.fail();
    }
  })();
  // Awaited by the walk's caller once the walk is done; one that failed first leaves it.
  finished.catch(() => undefined);
  return { listing: records.listing, finished };
}

/** The answer of a whole scan (`startChangeScan` without reading along). */
export const scanChangedDirs = (root: DirHandle, options: ChangedDirsOptions): Promise<ChangedDirs | null> => startChangeScan(root, options).finished;

// The scan by a `find` of its own, given the root's descriptor as its fd 3 (its output buffered:
// the fallback, as it always was).
async function scanInProcess(root: DirHandle, options: ChangedDirsOptions, records: Records): Promise<ChangedDirs | null> {
  let complained = false;
  const stop = new AbortController();
  // `-H` follows only the starting point (the root, by its descriptor); nothing below it is followed.
  const result = await runCommand('find', ['-H', `/proc/self/fd/${CHILD_ROOT_FD}`, ...SCAN_EXPRESSION(findTime(options.sinceNs))], {
    cwd: '/',
    env: { PATH: options.systemPath, LC_ALL: 'C' },
    timeoutMs: options.deadlineMs ?? SCAN_DEADLINE_MS,
    signal: anySignal([options.signal, stop.signal]),
    fds: [root.fd],
    maxOutputBytes: 0,
    // A message (a vanished entry, an unreadable directory) means the listing may be incomplete.
    onStderr: () => {
      complained = true;
    },
    onStdout: (chunk) => {
      if (!records.push(chunk)) stop.abort();
    },
  }).catch(() => null);
  options.signal.throwIfAborted();
  return records.settle(result !== null && result.exitCode === 0 && !result.timedOut && !result.aborted && !complained);
}
