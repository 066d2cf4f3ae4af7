/**
 * The stat caches of the live trees one process persists (stat-cache.ts is the file format).
 * The cache a persist wrote for a tree is kept in memory, so the next persist of that tree in
 * this process reads and validates no file (at 100,000 files that parse cost about 0.2 s a
 * persist); the file is written after the revision is committed, in the background, the newest
 * cache of a file only (a slow disk never queues old ones). After this process's first write of
 * a tree's cache (a whole snapshot), a write appends only what changed since the one before to
 * the file's log, until the log would outgrow half the snapshot: then a new snapshot replaces
 * both. A kept cache belongs to the revision it was written for, exactly as the file does: a
 * revision is written by one persist, so a kept cache for it is what its file says or will say,
 * and any other revision reads the file.
 * Memory is bounded by entries (least recently used trees are forgotten first).
 */
import { stat } from 'node:fs/promises';
import {
  appendStatCacheLog,
  encodeStatCacheDelta,
  identityOf,
  loadStatCache,
  NO_FACTS,
  saveStatCache,
  statCacheDelta,
  statCacheLog,
  type LoadedStatCache,
  type ScanFacts,
  type StatCache,
  type TreeIdentity,
} from './stat-cache.js';

/** Entries kept in memory across all trees (about 150 bytes each). */
export const KEPT_ENTRIES = 2_000_000;

interface Kept {
  readonly revision: string;
  readonly tree: string;
  readonly loaded: LoadedStatCache;
}

/** A log is never replaced by a snapshot below this size (a small tree's log may outgrow half its snapshot). */
const MIN_LOG_BYTES = 256 * 1024;

// What this process last wrote to a cache file (snapshot and log): the next write appends to it.
interface OnDisk {
  readonly revision: string;
  readonly tree: string;
  readonly loaded: LoadedStatCache;
  readonly snapshotBytes: number;
  /** The snapshot's inode: a file removed or replaced since is not appended to. */
  readonly snapshotIno: number;
  readonly logBytes: number;
}

interface Pending {
  readonly revision: string;
  readonly tree: TreeIdentity;
  readonly entries: StatCache;
  readonly facts: ScanFacts;
}

export class StatCaches {
  // Insertion order is recency order (a hit moves the tree to the end).
  readonly #kept = new Map<string, Kept>();
  #keptEntries = 0;
  readonly #pending = new Map<string, Pending>();
  readonly #writing = new Map<string, Promise<void>>();
  readonly #onDisk = new Map<string, OnDisk>();

  constructor(
    /** Told about a cache file that could not be written (the next process persists once without the ctime check). */
    private readonly onWriteError: (file: string, error: unknown) => void,
    private readonly maxEntries = KEPT_ENTRIES,
  ) {}

  /** The cache of the tree at `file` for `revision`: the one kept in memory, else the file's; null when neither is for it. */
  async load(file: string, revision: string, tree: TreeIdentity): Promise<LoadedStatCache | null> {
    const kept = this.#kept.get(file);
    if (kept && kept.revision === revision && kept.tree === identityOf(tree)) {
      this.#kept.delete(file);
      this.#kept.set(file, kept);
      return kept.loaded;
    }
    return loadStatCache(file, revision, tree).catch(() => null);
  }

  /**
   * Keeps `entries` (by path; the caller hands it over and never changes it again: a 100,000-entry
   * map is not copied) as the cache of `revision` and writes the file in the background.
   */
  save(file: string, revision: string, tree: TreeIdentity, entries: StatCache, facts: ScanFacts = NO_FACTS): void {
    this.#keep(file, { revision, tree: identityOf(tree), loaded: { entries, facts } });
    this.#pending.set(file, { revision, tree, entries, facts });
    if (!this.#writing.has(file)) this.#writing.set(file, this.#drain(file));
  }

  /** Resolves once every cache saved so far is on disk (or failed to be written). */
  async flush(): Promise<void> {
    while (this.#writing.size > 0) await Promise.all(this.#writing.values());
  }

  #keep(file: string, kept: Kept): void {
    this.#drop(file);
    if (kept.loaded.entries.size > this.maxEntries) {
      this.#onDisk.delete(file);
      return;
    }
    this.#kept.set(file, kept);
    this.#keptEntries += kept.loaded.entries.size;
    for (const [oldest] of this.#kept) {
      if (this.#keptEntries <= this.maxEntries) break;
      this.#drop(oldest);
      // Nor what was written for it (a write for it later starts a snapshot): memory stays bounded.
      this.#onDisk.delete(oldest);
    }
  }

  #drop(file: string): void {
    const kept = this.#kept.get(file);
    if (!kept) return;
    this.#kept.delete(file);
    this.#keptEntries -= kept.loaded.entries.size;
  }

  // Writes the newest pending cache of `file` until none is pending.
  async #drain(file: string): Promise<void> {
    try {
      for (let next = this.#pending.get(file); next; next = this.#pending.get(file)) {
        this.#pending.delete(file);
        await this.#write(file, next).catch((error: unknown) => {
          // What the file holds is unknown now: the next write is a whole snapshot.
          this.#onDisk.delete(file);
          this.onWriteError(file, error);
        });
      }
    } finally {
      this.#writing.delete(file);
    }
  }

  // Appends `next` to what this process last wrote to `file` as a log line, or writes a snapshot
  // (a failure leaves the file unknown: `#drain` then forgets what was written).
  async #write(file: string, next: Pending): Promise<void> {
    const loaded = { entries: next.entries, facts: next.facts };
    const tree = identityOf(next.tree);
    const last = this.#onDisk.get(file);
    if (last && last.tree === tree && (await this.#unchangedOnDisk(file, last))) {
      const line = encodeStatCacheDelta(next.tree, { from: last.revision, revision: next.revision, exact: next.facts.exact, fullWalkAt: next.facts.fullWalkAt, changedAfterNs: next.facts.changedAfterNs, exactLine: next.facts.exactLine, ...statCacheDelta(last.loaded, loaded) });
      const logBytes = last.logBytes + Buffer.byteLength(line);
      if (logBytes <= Math.max(MIN_LOG_BYTES, last.snapshotBytes / 2)) {
        await appendStatCacheLog(file, line);
        this.#onDisk.set(file, { ...last, revision: next.revision, loaded, logBytes });
        return;
      }
    }
    const snapshotBytes = await saveStatCache(file, next.revision, next.tree, next.entries, next.facts);
    this.#onDisk.set(file, { revision: next.revision, tree, loaded, snapshotBytes, snapshotIno: (await stat(file)).ino, logBytes: 0 });
  }

  // Whether the snapshot and log of `file` are still what this process wrote (nothing removed, replaced or cut).
  async #unchangedOnDisk(file: string, last: OnDisk): Promise<boolean> {
    const [snapshot, log] = await Promise.all([stat(file).catch(() => null), stat(statCacheLog(file)).catch(() => null)]);
    return snapshot?.ino === last.snapshotIno && (log?.size ?? 0) === last.logBytes;
  }
}
