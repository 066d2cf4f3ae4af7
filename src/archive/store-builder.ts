/**
 * Format 2's persist walk: turns a source tree into objects and tree objects in the store, in
 * one walk by directory handles (the same hostile-tree rules as the format 1 copier: nothing is
 * followed, entries over a limit are refused and keep their previous state, a vanished directory
 * counts as everything it held). What it costs follows the change:
 *
 * - an unchanged file (the stat cache, else the previous revision's tree, says same size, mode
 *   and mtime, and the racily-clean rule does not apply) is referenced by its object id: no open,
 *   no read, no write;
 * - a changed file is read once, hashed and stored (a content the store already has costs no
 *   write); a file that changes while it is read is read again, or keeps its previous version;
 *   a file written in the second before it is read is read twice and kept only when both reads
 *   agree (store-open-file.ts);
 * - a directory is one tree object, written only when its entries changed; a kept directory
 *   (upload-only) is its previous tree id, whatever it holds;
 * - with `changed` (changed-dirs.ts), a directory that holds no change since the basis's walk is
 *   its previous tree id, neither opened nor listed; its totals are counted from the trees. In a
 *   walked directory that did not change itself the names are the basis's (not read again), and
 *   an entry that did not change is taken as recorded (not stat'ed). Both hold only in a
 *   directory that is the one the basis's walk recorded at its path (`Frame.recorded`).
 */
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import { StorageError } from '../errors/storage-error.js';
import { TaskPool } from '../lib/task-pool.js';
import { READ_FILE_FLAGS, type DirHandle } from '../tree/dir-handle.js';
import { sameMtime } from '../tree/file-times.js';
import type { TreeLimits } from '../tree/tree-limits.js';
import { UNREADABLE } from './copy-entry.js';
import { describeSource, type LiveItem } from './describe-source.js';
import { prepareTree, SYNC_TREE_BYTES, type ObjectStore } from './object-store.js';
import { ObjectPlacer } from './object-placer.js';
import { freshLinkKey, LinkGroups } from './link-groups.js';
import { keyOf } from './prior-index.js';
import { dirIdentity, type StatCache, type StatCacheEntry } from './stat-cache.js';
import { READ_ATTEMPTS, storeOpenFile, type OpenFileOutcome } from './store-open-file.js';
import { WriteWaits } from './write-waits.js';
import { keepsWriteLock } from '../tree/write-barrier.js';
import { storeSmallFileSync } from './store-small-file-sync.js';
import { storeSettledFile } from './store-settled-file.js';
import { storedMode } from './stored-mode.js';
import { sameNode, type DirNode, type FileNode, type TreeNode } from './tree-object.js';
import { childRel, encodePath, typeOf, vanished } from './tree-walk.js';
import { WalkTally } from './walk-tally.js';
import type { ChangedDirs } from './changed-dirs.js';
import { ScanListing } from './scan-listing.js';
import { treeTotal } from './tree-totals.js';

/** Files read and stored at once. */
const FILE_CONCURRENCY = 16;
/**
 * Changed files up to this size (and not sparse, with one name) are stored synchronously
 * (store-small-file-sync.ts): their dozen syscalls cost less than as thread-pool round trips.
 */
export const SYNC_FILE_BYTES = 64 * 1024;
/**
 * Larger files up to this size, changed over a second ago, are stored with one thread-pool trip
 * (the write barrier) and the rest synchronous (store-settled-file.ts); larger or younger ones
 * are streamed.
 */
export const SETTLED_FILE_BYTES = 1024 * 1024;
/** Longest run of synchronous stores between two turns of the event loop (ms): timers and lock renewals run. */
const YIELD_MS = 20;
/**
 * The same while files are being read in the thread pool: each of their steps waits for a turn,
 * and a directory's end waits for its files (20 ms turns left a 10,000-file first persist waiting
 * on them for 600 ms of its 1.1 s walk).
 */
const BUSY_YIELD_MS = 1;
/** The previous revision, for the quick check and what upload-only keeps. */
export interface StoreBasis {
  readonly root: string;
  /**
   * The line its walk drew (change-stamp.ts): a file whose mtime or ctime is at or after it is
   * hashed again even when its stat matches, so a same-size rewrite in the same timestamp tick
   * as that walk's read is never missed (git's racily-clean rule).
   */
  readonly changedAfterNs: bigint;
}

export interface StoreBuilderOptions {
  readonly store: ObjectStore;
  readonly basis: StoreBasis | null;
  /** Host-side stat cache of the source (path → stat and object), or null. */
  readonly cache: StatCache | null;
  /** Keep entries of the basis the source lacks (upload-only). */
  readonly keepMissing: boolean;
  readonly limits: TreeLimits;
  readonly signal: AbortSignal;
  readonly onProgress?: (walked: number) => void;
  /**
   * Which directories hold a change since the basis's walk; the others are taken from the basis
   * by id. Only for a basis that is exactly what a walk of this very tree found (ScanFacts.exact).
   * The listing of a scan still under way is followed: a directory waits for the scan to leave
   * it, and the subdirectories the scan has finished are walked meanwhile (`#whileScanning`).
   */
  readonly changed?: ChangedDirs | null;
  /** The directories the basis's walk recorded (path → `dirIdentity`; ScanFacts.dirs), with `changed`. */
  readonly recordedDirs?: ReadonlyMap<string, string>;
  /** Small objects placed on the walk's thread before the rest go to a writer thread (default WRITER_AFTER, object-placer.ts). */
  readonly writerAfter?: number;
  /** Start the writer thread first and wait until it runs (tests: every object after `writerAfter` goes through it, however slow the thread is to start). */
  readonly writerFirst?: boolean;
}

interface Frame {
  readonly rel: Buffer;
  readonly depth: number;
  readonly src: DirHandle | null;
  /**
   * Whether the directory is the one the basis's walk recorded at this path (the root, whose
   * identity the stat cache is tied to; else the identity `recordedDirs` gives for the path), or
   * one made since that walk, whose every entry then changed after it. Only then does the change
   * scan's verdict on an entry speak of the entry `prior` holds under its name: a directory moved
   * over another carries entries older than the walk that are not the entries the replaced one had.
   */
  readonly recorded: boolean;
  readonly prior: ReadonlyMap<string, TreeNode> | undefined;
  /** The id of the directory's tree in the basis (reachable from it: an unchanged one is not stored again). */
  readonly priorTree: string | undefined;
  /** The directory's nodes by slot (null: dropped). */
  readonly nodes: (TreeNode | null)[];
  readonly tasks: Promise<void>[];
  /** Subdirectories walked while the scan went on (name key → the directory walked and its tree). */
  ahead?: Map<string, WalkedAhead>;
}

/** A subdirectory walked ahead of its parent's entries: which directory (`dirIdentity`) and its tree. */
interface WalkedAhead {
  readonly identity: string;
  readonly tree: string;
}

/** An entry of the previous revision the change scan vouches for, with its stat cache entry (files). */
interface Vouched {
  readonly node: TreeNode;
  readonly cached: StatCacheEntry | null;
}

/** A stored file's facts, shared by the names of one inode. */
interface StoredFile {
  readonly object: string;
  readonly size: number;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

/** `stats`: the open file's, before it was read. */
type StoreOutcome = { readonly kind: 'stored'; readonly file: StoredFile; readonly stats: BigIntStats } | { readonly kind: 'vanished' | 'refused' | 'unstable' };

// True when `nodes` are exactly the previous directory's nodes.
function sameNodes(nodes: readonly TreeNode[], prior: ReadonlyMap<string, TreeNode> | undefined): boolean {
  if (!prior || nodes.length !== prior.size) return false;
  return nodes.every((n) => {
    const before = prior.get(keyOf(n.name));
    return before !== undefined && sameNode(n, before);
  });
}

export class StoreBuilder {
  readonly #o: StoreBuilderOptions;
  readonly #pool: TaskPool;
  readonly #inodes = new Map<string, Promise<StoredFile | null>>();
  readonly #links = new LinkGroups();
  readonly tally: WalkTally;
  /** Stat cache entries of every file whose content this walk knows for certain. */
  readonly cacheEntries: StatCacheEntry[] = [];
  files = 0;
  bytes = 0;
  entries = 0;
  reusedFiles = 0;
  hashedFiles = 0;
  /** Files new to the revision or whose content or mode differ from the previous one (a re-read that found the same bytes is not a change). */
  changedFiles = 0;
  keptEntries = 0;
  newObjects = 0;
  storedBytes = 0;
  newTrees = 0;
  /** Of `newObjects`, those the writer thread placed. */
  offThreadObjects = 0;
  /**
   * Files that kept changing while read (their previous version was kept), by path, with their
   * ctime as last seen (a change of theirs may still be under way).
   */
  readonly unsettled = new Map<string, bigint>();
  /** Directories taken from the basis by id, unopened (`changed`), and the entries they hold. */
  reusedDirs = 0;
  reusedEntries = 0;
  /** Entries of walked directories taken as recorded without an lstat (the change scan vouched for them). */
  vouchedEntries = 0;
  /** Walked directories whose names were taken from the basis, not read (they did not change themselves). */
  listedDirs = 0;
  /**
   * Whether the walk met an entry of a device other than the root's (a mount inside the tree):
   * its timestamps need not follow the root's filesystem's clock, so the walk's line is the
   * host clock's (change-stamp.ts).
   */
  foreignDevice = false;
  /**
   * A subdirectory walked while the scan went on was not found the same by its parent's walk
   * (moved, replaced or gone in between): the counts of this walk are not those of the tree it
   * built, and the caller walks again without following a scan.
   */
  aheadMissed = false;
  #rootDev = -1n;
  /** The identity of each directory this walk opened, by path (the root aside): the next walk's `recordedDirs`. */
  readonly dirIdentities = new Map<string, string>();
  /** When the walk last let the event loop turn (synchronous stores). */
  #turn = performance.now();
  /** The walk's budget for waiting on files changed too recently to read (a write(2) may be under way). */
  readonly #waits: WriteWaits;
  /** Tree writes under way (the build waits for them with the pool). */
  readonly #treeWrites: Promise<void>[] = [];
  /**
   * The tree's filesystem holds a write(2)'s inode lock while it copies (tree/write-barrier.ts):
   * a streamed file's reads also wait for writes under way (not a small one's: those are read on
   * the event loop, and a write of at most 64 KB stalls only as long as its writer is descheduled).
   */
  #writeLock = false;
  /** What `storeSmallFileSync` stores through: the store itself, then a writer thread (object-placer.ts). */
  readonly #smallStore: ObjectPlacer;

  constructor(options: StoreBuilderOptions) {
    this.#o = options;
    this.#pool = new TaskPool(FILE_CONCURRENCY, options.signal);
    this.tally = new WalkTally(options.onProgress);
    this.#waits = new WriteWaits(options.signal);
    this.#smallStore = new ObjectPlacer(options.store, {
      ...(options.writerAfter === undefined ? {} : { after: options.writerAfter }),
      onWritten: (objects, bytes) => {
        this.newObjects += objects;
        this.offThreadObjects += objects;
        this.storedBytes += bytes;
      },
    });
  }

  /** How long the walk waited for files changed too recently to read (ms). */
  get writeWaitMs(): number {
    return this.#waits.waitedMs;
  }

  /** Walks `src` into the store; returns the root tree id. */
  async build(src: DirHandle): Promise<string> {
    this.#writeLock = keepsWriteLock(src.fd);
    this.#rootDev = src.stats.dev;
    // The packs other processes wrote since this store last listed them (one stat when none did): their objects are not stored again.
    this.#o.store.packs.refresh();
    if (this.#o.writerFirst) await this.#smallStore.whenOnline();
    try {
      const basis = this.#o.basis;
      if (basis && this.#o.changed?.rootClean) {
        await this.#reuse(basis.root);
        return basis.root;
      }
      const prior = basis ? await this.#priorMap(basis.root) : undefined;
      const root = await this.#directory({ rel: Buffer.alloc(0), depth: 1, src, recorded: this.#o.changed != null, prior, priorTree: this.#o.basis?.root, nodes: [], tasks: [] });
      await this.#pool.drain();
      await this.#smallStore.drain();
      return root;
    } catch (error) {
      await this.#pool.settle();
      throw error;
    } finally {
      await this.#smallStore.close();
    }
  }

  async #priorMap(tree: string): Promise<Map<string, TreeNode>> {
    return new Map((await this.#o.store.readTree(tree)).map((n) => [keyOf(n.name), n]));
  }

  // Builds one directory's tree (its subdirectories first, depth first) and stores it.
  async #directory(frame: Frame): Promise<string> {
    this.#pool.check();
    const { changed } = this.#o;
    if (changed instanceof ScanListing && frame.src && !changed.finished(frame.rel)) await this.#whileScanning(changed, frame);
    // Entries the change scan vouches for are taken as recorded, without an lstat each.
    const vouched = new Map<string, Vouched>();
    const known = (name: Buffer, key: string): boolean => {
      const found = this.#vouched(frame, name, key);
      if (found) vouched.set(key, found);
      return found !== null;
    };
    const scanned = this.#o.changed && frame.recorded && frame.prior ? this.#o.changed : null;
    // A recorded directory that did not change itself holds the names the basis's walk listed: they are not read again.
    const listed = scanned && !scanned.changedEntry(frame.rel) ? [...frame.prior!.values()].map((n) => n.name) : undefined;
    const described = frame.src
      ? await describeSource(frame.src, frame.rel, this.tally, this.#o.limits.maxEntries, { ...(scanned ? { known } : {}), listed, unseen: (key) => frame.prior?.get(key) === undefined })
      : { items: [], known: [], toOpen: [], refused: new Set<string>(), keepAll: true };
    if (listed) this.listedDirs += 1;
    const liveKeys = new Set([...described.items.map((i) => i.key), ...described.known.map((k) => k.key), ...described.toOpen.map((k) => k.key)]);
    const keepAll = described.keepAll || this.#o.keepMissing;
    for (const [key, node] of frame.prior ?? []) if (!liveKeys.has(key) && (keepAll || described.refused.has(key))) this.#keep(frame, node);
    for (const { name, key } of described.known) this.#known(frame, name, vouched.get(key)!);
    // In name order, as listed (the files not lstat'ed among the others).
    const { items, toOpen } = described;
    for (let i = 0, j = 0; i < items.length || j < toOpen.length; ) {
      if (j === toOpen.length || (i < items.length && items[i]!.key < toOpen[j]!.key)) await this.#live(frame, items[i++]!);
      else await this.#unseenFile(frame, toOpen[j]!.name, toOpen[j++]!.key);
    }
    await Promise.all(frame.tasks);
    this.#pool.check();
    if (frame.ahead !== undefined && frame.ahead.size > 0) this.aheadMissed = true;
    if (frame.src && frame.src.statSync().nlink === 0n) await this.#vanishedDirectory(frame.prior);
    const nodes = frame.nodes.filter((n): n is TreeNode => n !== null);
    this.entries += nodes.length;
    // A directory whose every entry is its previous one is its previous tree: no encoding, no hashing.
    if (frame.priorTree !== undefined && sameNodes(nodes, frame.prior)) return frame.priorTree;
    const prepared = prepareTree(nodes);
    if (prepared.id === frame.priorTree) return prepared.id;
    // A tree of a few kilobytes is written at once, without the thread pool. A larger one's id is
    // known before it is written: the write joins the pool and the walk goes on (the build waits for it).
    if (prepared.bytes.length <= SYNC_TREE_BYTES) {
      if (this.#o.store.putPreparedTreeSync(prepared, frame.priorTree).written) this.newTrees += 1;
    } else {
      await this.#pool.schedule(this.#treeWrites, async () => {
        if ((await this.#o.store.putPreparedTree(prepared, frame.priorTree)).written) this.newTrees += 1;
      });
    }
    return prepared.id;
  }

  // A node of the previous revision taken as it is (a directory keeps its whole tree by reference).
  #keep(frame: Frame, node: TreeNode): void {
    frame.nodes.push(node);
    this.keptEntries += 1;
    if (node.type === 'f') {
      this.files += 1;
      this.bytes += node.size;
    }
  }

  // Counts a directory that vanished during the walk as what it held (capped: only the tolerance matters).
  async #vanishedDirectory(prior: ReadonlyMap<string, TreeNode> | undefined): Promise<void> {
    let count = 0;
    const walk = async (nodes: Iterable<TreeNode>): Promise<void> => {
      for (const node of nodes) {
        count += 1;
        if (count > 100_000) return;
        if (node.type === 'd') await walk(await this.#o.store.readTree(node.tree));
      }
    };
    await walk(prior?.values() ?? []);
    this.tally.vanished += Math.max(1, count);
  }

  /**
   * A file, symlink or FIFO of the previous revision that the change scan says did not change
   * since the walk that recorded it (its ctime is older: the same inode, as it was), or null. A
   * file needs its stat cache entry (carried into the next cache, and its recorded mtime for the
   * racily-clean rule); one with other names, and directories, are stat'ed as before.
   */
  #vouched(frame: Frame, name: Buffer, key: string): Vouched | null {
    const { changed, basis } = this.#o;
    const node = frame.prior?.get(key);
    if (!changed || !basis || !frame.recorded || !node || node.type === 'd') return null;
    const rel = childRel(frame.rel, name);
    if (changed.changedEntry(rel)) return null;
    if (node.type !== 'f') return { node, cached: null };
    if (node.linkKey !== undefined) return null;
    const cached = this.#o.cache?.get(encodePath(rel));
    if (!cached || cached.object !== node.object || cached.size !== node.size || cached.mode !== node.mode) return null;
    if (cached.mtimeNs >= basis.changedAfterNs || cached.ctimeNs >= basis.changedAfterNs) return null;
    return { node, cached };
  }

  // Places a vouched entry as recorded (the entry limit applies as to any other).
  #known(frame: Frame, name: Buffer, { node, cached }: Vouched): void {
    this.tally.tick();
    if (this.tally.walked > this.#o.limits.maxEntries) this.tally.refuse('entries', childRel(frame.rel, name), `over the ${this.#o.limits.maxEntries}-entry limit`);
    frame.nodes.push(node);
    this.vouchedEntries += 1;
    if (node.type !== 'f') return;
    this.reusedFiles += 1;
    this.files += 1;
    this.bytes += node.size;
    if (cached) this.cacheEntries.push(cached);
  }

  async #live(frame: Frame, item: LiveItem): Promise<void> {
    this.tally.tick();
    const rel = childRel(frame.rel, item.name);
    const { limits } = this.#o;
    const keepPrior = () => {
      const node = frame.prior?.get(item.key);
      if (node) this.#keep(frame, node);
    };
    if (this.#refusedByLimits(rel)) return keepPrior();
    const { stats, name } = item;
    if (stats.dev !== this.#rootDev) this.foreignDevice = true;
    const mode = this.#modeOf(stats);
    switch (typeOf(stats)) {
      case 'dir': {
        if (frame.depth >= limits.maxDepth) {
          this.tally.refuse('depth', rel, `directory at depth ${frame.depth} reaches the ${limits.maxDepth}-level limit`);
          return keepPrior();
        }
        return this.#subdirectory(frame, item, rel, mode);
      }
      case 'file':
        return this.#file(frame, item, rel, mode);
      case 'symlink':
        frame.nodes.push({ type: 'l', name, target: item.target! });
        return;
      case 'fifo': {
        // An unchanged FIFO keeps its node (a restored one carries the stored form of its time).
        const before = frame.prior?.get(item.key);
        const same = before?.type === 'p' && before.mode === mode && sameMtime(stats.mtimeNs, before.mtimeNs);
        frame.nodes.push(same ? before : { type: 'p', name, mode, mtimeNs: stats.mtimeNs });
        return;
      }
      case 'socket':
        this.tally.skipped.sockets += 1;
        return;
      default:
        this.tally.skipped.devices += 1;
        return;
    }
  }

  // Refuses (and counts) an entry past the walk's entry limit or whose path is too long.
  #refusedByLimits(rel: Buffer): boolean {
    const { limits } = this.#o;
    if (this.tally.walked > limits.maxEntries) {
      this.tally.refuse('entries', rel, `over the ${limits.maxEntries}-entry limit`);
      return true;
    }
    if (rel.length > limits.maxPathBytes) {
      this.tally.refuse('path-bytes', rel, `path is ${rel.length} bytes, over the ${limits.maxPathBytes}-byte limit`);
      return true;
    }
    return false;
  }

  // The mode an entry is stored with (set-id bits stripped, and counted).
  #modeOf(stats: BigIntStats): number {
    const mode = storedMode(stats.mode & 0o7777n);
    if (mode !== Number(stats.mode & 0o7777n)) this.tally.strippedModes += 1;
    return mode;
  }

  /**
   * A name the listing says is a regular file, with no previous entry to compare it with (every
   * file of a first persist; a new one later): not lstat'ed. It is opened and stored at once when
   * small with one name, what it is known from the open descriptor's stat; else that stat
   * describes it and it is stored as any other file. An entry that is no longer a regular file
   * when opened (swapped since the listing) is dropped as vanished, as one swapped between an
   * lstat and the open is: the next persist takes what is there.
   */
  async #unseenFile(frame: Frame, name: Buffer, key: string): Promise<void> {
    this.tally.tick();
    const rel = childRel(frame.rel, name);
    if (this.#refusedByLimits(rel)) return;
    await this.#breathe();
    const outcome = await this.#storeSmall(frame, name, rel);
    if ((outcome.kind === 'large' || outcome.kind === 'stored') && outcome.stats.dev !== this.#rootDev) this.foreignDevice = true;
    if (outcome.kind === 'large') return this.#file(frame, { name, key, stats: outcome.stats }, rel, this.#modeOf(outcome.stats));
    if (outcome.kind !== 'stored') return;
    const { file, stats } = outcome;
    const mode = this.#modeOf(stats);
    frame.nodes.push({ type: 'f', name, mode, size: file.size, object: file.object, mtimeNs: file.mtimeNs });
    this.changedFiles += 1;
    this.files += 1;
    this.bytes += file.size;
    this.cacheEntries.push({ path: encodePath(rel), size: file.size, mode, mtimeNs: file.mtimeNs, ctimeNs: file.ctimeNs, ino: stats.ino, object: file.object });
  }

  // Counts a directory taken from the basis by id as what its tree holds.
  async #reuse(tree: string): Promise<void> {
    const total = await treeTotal(this.#o.store, tree);
    this.files += total.files;
    this.bytes += total.bytes;
    this.entries += total.entries;
    this.tally.walked += total.entries;
    this.reusedDirs += 1;
    this.reusedEntries += total.entries;
  }

  async #subdirectory(frame: Frame, item: LiveItem, rel: Buffer, mode: number): Promise<void> {
    const walked = frame.ahead?.get(item.key);
    if (walked) {
      frame.ahead!.delete(item.key);
      // Walked while the scan went on, and still the directory under this name.
      if (walked.identity === dirIdentity(item.stats)) {
        frame.nodes.push({ type: 'd', name: item.name, mode, tree: walked.tree } satisfies DirNode);
        return;
      }
      this.aheadMissed = true;
    }
    const before = frame.prior?.get(item.key);
    const changed = this.#o.changed;
    if (before?.type === 'd' && frame.recorded && changed?.reusable(rel)) {
      await this.#reuse(before.tree);
      frame.nodes.push({ type: 'd', name: item.name, mode, tree: before.tree } satisfies DirNode);
      return;
    }
    await this.#breathe();
    let src: DirHandle;
    try {
      src = frame.src!.openDirSync(item.name);
    } catch (error) {
      const gone = vanished(error);
      if (gone) await this.#vanishedDirectory(before?.type === 'd' ? await this.#priorMap(before.tree) : undefined);
      else if (UNREADABLE.has(errnoOf(error) ?? '')) this.tally.refuse('unreadable', rel, `directory cannot be opened (${errnoOf(error)})`);
      else throw classifyStorageError(error, 'persist read', encodePath(rel));
      // Gone: a reconcile drops it (unless upload-only keeps it); refused: it keeps its previous state.
      if (before && (!gone || this.#o.keepMissing)) this.#keep(frame, before);
      return;
    }
    try {
      frame.nodes.push({ type: 'd', name: item.name, mode, tree: await this.#directory(await this.#subframe(frame, src, rel, before)) } satisfies DirNode);
    } finally {
      src.closeSync();
    }
  }

  // The frame of the opened subdirectory `src` at `rel` of `frame` (`before`: its entry in the basis).
  async #subframe(frame: Frame, src: DirHandle, rel: Buffer, before: TreeNode | undefined): Promise<Frame> {
    const prior = before?.type === 'd' ? await this.#priorMap(before.tree) : undefined;
    const identity = dirIdentity(src.stats);
    const path = encodePath(rel);
    this.dirIdentities.set(path, identity);
    const recorded = this.#o.changed != null && before?.type === 'd' && this.#o.recordedDirs?.get(path) === identity;
    return { rel, depth: frame.depth + 1, src, recorded, prior, priorTree: before?.type === 'd' ? before.tree : undefined, nodes: [], tasks: [] };
  }

  /**
   * While the scan is still inside a directory: walks the subdirectories it has finished, as it
   * finishes them, and follows it into the one it is in, so the walk keeps pace with the scan
   * instead of waiting for its end; the directory's own entries wait until the scan has left it
   * (only then is every verdict on them in). Only subdirectories the basis holds as directories,
   * and not those the scan says are unchanged: the directory's walk takes those by id, and new
   * ones, as usual. One followed into that the scan then finds unchanged is left to be taken by id
   * too (nothing in it was walked: it holds no change). The directory's walk finds each walked one
   * in `frame.ahead`, checked to be the same directory (`#subdirectory`); one moved, replaced or
   * gone in between is `aheadMissed`.
   */
  async #whileScanning(scan: ScanListing, frame: Frame): Promise<void> {
    const dirKey = keyOf(frame.rel);
    const nameAt = dirKey === '' ? 0 : dirKey.length + 1;
    const seen = new Set<string>();
    let taken = 0;
    while (!scan.finished(frame.rel)) {
      const finished = scan.finishedUnder(dirKey);
      let next: string | null = null;
      while (next === null && taken < finished.length) {
        const key = finished[taken++]!;
        if (!seen.has(key)) next = key;
      }
      next ??= scan.openUnder(dirKey);
      if (next === null || seen.has(next)) {
        await scan.next();
        continue;
      }
      seen.add(next);
      await this.#walkAhead(scan, frame, next.slice(nameAt));
    }
  }

  // Walks the subdirectory named (key) `nameKey` of `frame` ahead of the frame's entries, if it is one to walk.
  async #walkAhead(scan: ScanListing, frame: Frame, nameKey: string): Promise<void> {
    const before = frame.prior?.get(nameKey);
    if (before?.type !== 'd') return;
    const rel = childRel(frame.rel, before.name);
    const { limits } = this.#o;
    if ((frame.recorded && scan.reusable(rel)) || frame.depth >= limits.maxDepth || rel.length > limits.maxPathBytes) return;
    await this.#breathe();
    let src: DirHandle;
    try {
      src = frame.src!.openDirSync(before.name);
    } catch {
      // Not a directory one can open now: the directory's walk finds out what it is.
      return;
    }
    try {
      const sub = await this.#subframe(frame, src, rel, before);
      if (!scan.finished(rel)) {
        await this.#whileScanning(scan, sub);
        if (frame.recorded && scan.reusable(rel) && sub.ahead === undefined) return;
      }
      const tree = await this.#directory(sub);
      (frame.ahead ??= new Map()).set(nameKey, { identity: dirIdentity(src.stats), tree });
    } finally {
      src.closeSync();
    }
  }

  /**
   * The quick check: the previous node of a file whose stat says it did not change (its time is
   * kept as recorded, so the trees of an unchanged tree stay the same after a restore).
   */
  #unchanged(frame: Frame, item: LiveItem, path: string, mode: number): { readonly node: FileNode; readonly cached: StatCacheEntry | null } | null {
    const { stats } = item;
    const basis = this.#o.basis;
    // Changed at or after the basis's line: maybe after that walk's read, in the same tick (the same mtime and ctime).
    if (basis && (stats.mtimeNs >= basis.changedAfterNs || stats.ctimeNs >= basis.changedAfterNs)) return null;
    const size = Number(stats.size);
    const before = frame.prior?.get(item.key);
    if (before?.type !== 'f' || before.size !== size || before.mode !== mode) return null;
    // The cache is a hint and may only confirm the previous revision's object, never name another.
    const cached = this.#o.cache?.get(path);
    if (cached && cached.object === before.object) {
      const same = cached.size === size && cached.mode === mode && cached.mtimeNs === stats.mtimeNs && cached.ctimeNs === stats.ctimeNs && cached.ino === stats.ino;
      // The cache entry is this walk's too (same path, stat and object): it is kept as it is.
      return same ? { node: before, cached } : null;
    }
    return sameMtime(stats.mtimeNs, before.mtimeNs) ? { node: before, cached: null } : null;
  }

  async #file(frame: Frame, item: LiveItem, rel: Buffer, mode: number): Promise<void> {
    const { stats, name } = item;
    const slot = frame.nodes.push(null) - 1;
    const path = encodePath(rel);
    const quick = this.#unchanged(frame, item, path, mode);
    const unchanged = quick?.node ?? null;
    // Names of one inode share a key and are read once.
    const inodeKey = stats.nlink > 1n ? `${stats.dev}:${stats.ino}` : undefined;
    // The group key of this name whose content is `object`: its previous node's when that was the same content.
    const linkKeyOf = (object: string): string | undefined => {
      if (inodeKey === undefined) return undefined;
      const before = frame.prior?.get(item.key);
      return this.#links.keyFor(inodeKey, freshLinkKey(stats), before?.type === 'f' && before.object === object ? before.linkKey : undefined);
    };
    // `liveMtime`: the time the cache must match next time (the node keeps the recorded one).
    const place = (stored: StoredFile, liveMtime = stored.mtimeNs) => {
      const linkKey = linkKeyOf(stored.object);
      const node: FileNode = { type: 'f', name, mode, size: stored.size, object: stored.object, mtimeNs: stored.mtimeNs, ...(linkKey ? { linkKey } : {}) };
      frame.nodes[slot] = node;
      this.files += 1;
      this.bytes += stored.size;
      this.cacheEntries.push({ path, size: stored.size, mode, mtimeNs: liveMtime, ctimeNs: stored.ctimeNs, ino: stats.ino, object: stored.object });
    };
    if (unchanged && quick?.cached && !inodeKey && unchanged.linkKey === undefined) {
      this.reusedFiles += 1;
      frame.nodes[slot] = unchanged;
      this.files += 1;
      this.bytes += unchanged.size;
      this.cacheEntries.push(quick.cached);
      return;
    }
    if (unchanged) {
      this.reusedFiles += 1;
      return place({ object: unchanged.object, size: unchanged.size, mtimeNs: unchanged.mtimeNs, ctimeNs: stats.ctimeNs }, stats.mtimeNs);
    }
    // What a read of the file found, into the slot (or the fallback).
    const settle = (outcome: StoreOutcome) => {
      if (outcome.kind === 'stored') {
        // Read again but the same: it keeps the recorded time (a restored file has its stored form).
        const before = frame.prior?.get(item.key);
        const same = before?.type === 'f' && before.object === outcome.file.object && sameMtime(outcome.file.mtimeNs, before.mtimeNs);
        if (before?.type !== 'f' || before.object !== outcome.file.object || before.mode !== mode) this.changedFiles += 1;
        const stored = same ? { ...outcome.file, mtimeNs: before.mtimeNs } : outcome.file;
        place(stored, outcome.file.mtimeNs);
        return stored;
      }
      // Gone: a reconcile drops it. Refused or still changing: its previous version stays.
      if (outcome.kind !== 'vanished' || this.#o.keepMissing) this.#fallback(frame, item, slot);
      return null;
    };
    // A small file with one name: stored here and now, without the thread pool.
    if (!inodeKey && stats.size <= BigInt(Math.min(SYNC_FILE_BYTES, this.#o.limits.maxFileBytes))) {
      await this.#breathe();
      const outcome = await this.#storeSmall(frame, name, rel);
      if (outcome.kind !== 'large') {
        settle(outcome);
        return;
      }
    }
    const first = inodeKey ? this.#inodes.get(inodeKey) : undefined;
    let resolve: ((stored: StoredFile | null) => void) | undefined;
    if (inodeKey && !first) this.#inodes.set(inodeKey, new Promise((r) => (resolve = r)));
    try {
      await this.#pool.schedule(frame.tasks, async () => {
        let stored: StoredFile | null = null;
        try {
          stored = first ? await first : null;
          if (stored) {
            this.tally.hardLinks += 1;
            const before = frame.prior?.get(item.key);
            if (before?.type !== 'f' || before.object !== stored.object || before.mode !== mode) this.changedFiles += 1;
            return place(stored);
          }
          stored = settle(await this.#store(frame, name, rel));
        } finally {
          resolve?.(stored);
        }
      });
    } catch (error) {
      resolve?.(null);
      throw error;
    }
  }

  // Lets the event loop turn when the walk has kept it for YIELD_MS; stops an aborted walk.
  async #breathe(): Promise<void> {
    // A writer thread behind by MAX_BATCHES: wait for it (its failure is the walk's).
    if (this.#smallStore.congested) {
      await this.#smallStore.room();
      this.#turn = performance.now();
    }
    if (performance.now() - this.#turn < (this.#pool.busy ? BUSY_YIELD_MS : YIELD_MS)) return;
    await setImmediate();
    this.#turn = performance.now();
    this.#pool.check();
  }

  // A file that could not be stored keeps the previous revision's version (upload-only, or refused), else it is dropped.
  #fallback(frame: Frame, item: LiveItem, slot: number): void {
    const before = frame.prior?.get(item.key);
    if (before?.type === 'f') {
      frame.nodes[slot] = before;
      this.keptEntries += 1;
      this.files += 1;
      this.bytes += before.size;
    }
  }

  // What a file that could not be opened is: vanished, refused as unreadable, or an error of the persist.
  #openFailed(error: unknown, rel: Buffer): StoreOutcome {
    if (vanished(error)) {
      this.tally.vanished += 1;
      return { kind: 'vanished' };
    }
    if (UNREADABLE.has(errnoOf(error) ?? '')) {
      this.tally.refuse('unreadable', rel, `cannot be opened (${errnoOf(error)})`);
      return { kind: 'refused' };
    }
    throw classifyStorageError(error, 'persist read', encodePath(rel));
  }

  /**
   * `#store` for a small file with one name, synchronously; `large` (with the open file's stat)
   * when it is not that after all: the caller stores it the other way. A write(2) may still be
   * copying into it: it is read once it is old enough (a file changed again meanwhile waits
   * again, as many times as it may be read, all within the walk's budget).
   */
  async #storeSmall(frame: Frame, name: Buffer, rel: Buffer): Promise<StoreOutcome | { readonly kind: 'large'; readonly stats: BigIntStats }> {
    let outcome = this.#storeSync(frame, name, rel, true);
    for (let waits = 1; outcome.kind === 'fresh'; waits++) {
      await this.#waits.wait(outcome.waitMs);
      this.#turn = performance.now();
      outcome = this.#storeSync(frame, name, rel, waits < READ_ATTEMPTS);
    }
    return outcome;
  }

  // One attempt of `#storeSmall`: `fresh` when the file changed too recently to be read yet.
  #storeSync(frame: Frame, name: Buffer, rel: Buffer, mayWait: boolean): StoreOutcome | { readonly kind: 'large'; readonly stats: BigIntStats } | { readonly kind: 'fresh'; readonly waitMs: number } {
    let outcome;
    try {
      const maxBytes = Math.min(SYNC_FILE_BYTES, this.#o.limits.maxFileBytes);
      outcome = storeSmallFileSync(frame.src!, name, { store: this.#smallStore, maxBytes, label: encodePath(rel), mayWait: mayWait && this.#waits.left > 0, singleName: true });
    } catch (error) {
      if (error instanceof StorageError) throw error;
      return this.#openFailed(error, rel);
    }
    if (outcome.kind === 'large' || outcome.kind === 'fresh') return outcome;
    return this.#stored(outcome, rel);
  }

  // `#store` for a file it takes with one thread-pool trip (store-settled-file.ts); null: stream it.
  async #storeSettled(frame: Frame, name: Buffer, rel: Buffer): Promise<StoreOutcome | null> {
    let outcome;
    try {
      const maxBytes = Math.min(SETTLED_FILE_BYTES, this.#o.limits.maxFileBytes);
      outcome = await storeSettledFile(frame.src!, name, { store: this.#smallStore, maxBytes, label: encodePath(rel), writeLock: this.#writeLock });
    } catch (error) {
      if (error instanceof StorageError) throw error;
      return this.#openFailed(error, rel);
    }
    return outcome.kind === 'careful' ? null : this.#stored(outcome, rel);
  }

  /**
   * The earliest ctime of the files kept back (`unsettled`), or null: the walk's line lies no
   * later (change-stamp.ts), so the next walk reads them however long their write stalls.
   */
  get unsettledNs(): bigint | null {
    let earliest: bigint | null = null;
    for (const ctimeNs of this.unsettled.values()) if (earliest === null || ctimeNs < earliest) earliest = ctimeNs;
    return earliest;
  }

  // Counts what a read of the changed file at `rel` gave.
  #stored(outcome: OpenFileOutcome, rel: Buffer): StoreOutcome {
    if (outcome.kind === 'vanished') this.tally.vanished += 1;
    if (outcome.kind === 'unstable') this.unsettled.set(encodePath(rel), outcome.ctimeNs);
    if (outcome.kind !== 'stored') return { kind: outcome.kind === 'too-large' ? 'refused' : outcome.kind };
    const { stored, before } = outcome;
    this.hashedFiles += 1;
    if (stored.written) {
      this.newObjects += 1;
      this.storedBytes += stored.bytes;
    }
    return { kind: 'stored', file: { object: stored.id, size: stored.bytes, mtimeNs: before.mtimeNs, ctimeNs: before.ctimeNs }, stats: before };
  }

  /**
   * Reads a changed file into the store, unless it vanished, is refused (unreadable, too large)
   * or keeps changing while it is read (then the next persist takes it).
   */
  async #store(frame: Frame, name: Buffer, rel: Buffer): Promise<StoreOutcome> {
    const settled = await this.#storeSettled(frame, name, rel);
    if (settled) return settled;
    let source: FileHandle;
    try {
      source = await frame.src!.openFile(name, READ_FILE_FLAGS);
    } catch (error) {
      return this.#openFailed(error, rel);
    }
    try {
      const outcome = await storeOpenFile(source, { store: this.#o.store, maxFileBytes: this.#o.limits.maxFileBytes, label: encodePath(rel), signal: this.#o.signal, waits: this.#waits, writeLock: this.#writeLock });
      if (outcome.kind === 'too-large') this.tally.refuse('file-bytes', rel, `file of ${outcome.size} bytes is over the ${this.#o.limits.maxFileBytes}-byte limit`);
      return this.#stored(outcome, rel);
    } finally {
      await source.close();
    }
  }
}
