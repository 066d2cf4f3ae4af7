/**
 * The stat caches of the live trees one process persists (stat-cache.ts is the file format).
 * The cache a persist wrote for a tree is kept in memory, so the next persist of that tree in
 * this process reads and validates no file (at 100,000 files that parse cost about 0.2 s a
 * persist); the file is written after the revision is committed, in the background, the newest
 * cache of a file only (a slow disk never queues old ones). A kept cache belongs to the revision
 * it was written for, exactly as the file does: a revision is written by one persist, so a kept
 * cache for it is what its file says or will say, and any other revision reads the file.
 * Memory is bounded by entries (least recently used trees are forgotten first).
 */
import { identityOf, loadStatCache, NO_FACTS, saveStatCache, type LoadedStatCache, type ScanFacts, type StatCache, type TreeIdentity } from './stat-cache.js';

/** Entries kept in memory across all trees (about 150 bytes each). */
export const KEPT_ENTRIES = 2_000_000;

interface Kept {
  readonly revision: string;
  readonly tree: string;
  readonly loaded: LoadedStatCache;
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
    if (kept.loaded.entries.size > this.maxEntries) return;
    this.#kept.set(file, kept);
    this.#keptEntries += kept.loaded.entries.size;
    for (const [oldest] of this.#kept) {
      if (this.#keptEntries <= this.maxEntries) break;
      this.#drop(oldest);
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
        await saveStatCache(file, next.revision, next.tree, next.entries, next.facts).catch((error: unknown) => this.onWriteError(file, error));
      }
    } finally {
      this.#writing.delete(file);
    }
  }
}
