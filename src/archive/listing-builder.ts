/**
 * Format 2 trees built from a listing of a tree that is not on this host (a Vercel sandbox),
 * without a copy of it: the files the listing shows unchanged are the previous revision's nodes,
 * the changed ones are objects fetched into the store, and everything else (directories,
 * symlinks, FIFOs, deletions, type changes) comes from the listing itself.
 *
 * Two steps, with the fetch of the changed files between them:
 *
 * - `planListing` decides, file by file, what the basis already holds. With an index of the
 *   sandbox's file versions (`ListedIndex`, written for the basis revision), a file is unchanged
 *   when the listing shows the version the index recorded (size, mode, mtime, ctime, inode,
 *   device) and the basis has the object the index names at that path, with that size, mode and
 *   time: the index is a hint, believed only where the revision agrees. Without a usable index
 *   (a new incarnation restored from the basis, another host's persist in between), a file the
 *   basis has with the same size, mode and mtime is taken from it: the quick check a local
 *   persist makes without its stat cache. Every other file is fetched.
 * - `buildFromListing` writes the trees: bottom-up, one per listed directory, and a directory
 *   whose nodes are exactly the basis's keeps the basis tree's id (nothing written). A file that
 *   was not fetched after all (it changed between the listing and the sandbox's second look, or
 *   is over the size limit) keeps its basis node, or is left out when the basis has none. A
 *   directory the sandbox could not read keeps its basis subtree whole; an incomplete listing,
 *   or an upload-only persist, keeps every basis entry it does not name.
 *
 * Modes and times are what a walk of a host copy of the listed tree would record (files and FIFOs
 * with the time as Node sets it, directories with owner rwx), so a revision built here equals the
 * one a host mirror gave.
 */
import { sameMtime, storedMtimeNs } from '../tree/file-times.js';
import type { ListedEntry, Listing } from '../tree/listing.js';
import type { ObjectStore } from './object-store.js';
import { keyOf } from './prior-index.js';
import { storedMode } from './stored-mode.js';
import { sameNode, type FileNode, type TreeNode } from './tree-object.js';

/** The version of a file as the sandbox listed it. */
export type ListedVersion = Pick<ListedEntry, 'size' | 'mode' | 'mtimeNs' | 'ctimeNs' | 'ino' | 'dev'>;

/** What the index says of one file: the listed version that the revision holds as `object`. */
export interface ListedIndexRow {
  readonly listed: ListedVersion;
  readonly object: string;
}

/** Rows by key (raw path bytes as latin1), valid for one revision. */
export type ListedIndex = ReadonlyMap<string, ListedIndexRow>;

export const listedFileMode = (listed: number): number => storedMode(listed);
export const listedDirMode = (listed: number): number => storedMode(listed) | 0o700;
export const listedFifoMode = (listed: number): number => storedMode(listed & 0o777);

export interface ListingPlan {
  /** Files to fetch, by key, in listing order. */
  readonly fetch: ReadonlyMap<string, ListedEntry>;
  /** Files over the size limit (their basis node is kept). */
  readonly refused: ReadonlyMap<string, ListedEntry>;
  /** Files the basis holds as listed: from the index (its `row`), or from the seed check (`seeded`). */
  readonly kept: ReadonlyMap<string, { readonly node: FileNode; readonly seeded: boolean; readonly row?: ListedIndexRow }>;
}

/** The basis's directories by key, read once each (through the store's tree cache). */
export class BasisLookup {
  readonly #store: ObjectStore;
  readonly #dirs = new Map<string, Promise<ReadonlyMap<string, TreeNode> | null>>();

  constructor(store: ObjectStore, root: string | null) {
    this.#store = store;
    this.#dirs.set('', root === null ? Promise.resolve(null) : this.#read(root));
  }

  async #read(tree: string): Promise<ReadonlyMap<string, TreeNode>> {
    return new Map((await this.#store.readTree(tree)).map((n) => [keyOf(n.name), n]));
  }

  /** The basis directory at `rel` (bytes, '' for the root) by name; null when the basis has none there. */
  dir(rel: Buffer): Promise<ReadonlyMap<string, TreeNode> | null> {
    const key = keyOf(rel);
    let known = this.#dirs.get(key);
    if (!known) {
      const slash = rel.lastIndexOf(0x2f);
      const parent = slash < 0 ? Buffer.alloc(0) : rel.subarray(0, slash);
      const name = keyOf(slash < 0 ? rel : rel.subarray(slash + 1));
      known = this.dir(parent).then((nodes) => {
        const node = nodes?.get(name);
        return node?.type === 'd' ? this.#read(node.tree) : null;
      });
      this.#dirs.set(key, known);
    }
    return known;
  }

  /** The basis node at `rel`, if any. */
  async node(rel: Buffer): Promise<TreeNode | undefined> {
    const slash = rel.lastIndexOf(0x2f);
    const dir = await this.dir(slash < 0 ? Buffer.alloc(0) : rel.subarray(0, slash));
    return dir?.get(keyOf(slash < 0 ? rel : rel.subarray(slash + 1)));
  }
}

const sameVersion = (entry: ListedVersion, known: ListedVersion) =>
  entry.size === known.size && entry.mode === known.mode && entry.mtimeNs === known.mtimeNs && entry.ctimeNs === known.ctimeNs && entry.ino === known.ino && entry.dev === known.dev;

// True when the basis node is the listed file's content as far as size, mode and time tell.
const holds = (node: TreeNode | undefined, entry: ListedEntry): node is FileNode =>
  node?.type === 'f' && node.size === entry.size && node.mode === listedFileMode(entry.mode) && (sameMtime(node.mtimeNs, entry.mtimeNs) || sameMtime(entry.mtimeNs, node.mtimeNs));

export interface PlanListingOptions {
  readonly basis: BasisLookup;
  readonly listing: Listing;
  /** The index written for the basis revision; null when there is none (then the seed check applies). */
  readonly index: ListedIndex | null;
  readonly maxFileBytes: number;
  /**
   * Does the store hold this object? Asked of a file taken by the seed check only: after a lost
   * host or a restore, an object the archive lost is fetched (and stored) again instead of named.
   */
  readonly hasObject: (id: string) => boolean;
  readonly signal: AbortSignal;
}

export async function planListing(options: PlanListingOptions): Promise<ListingPlan> {
  const { basis, index } = options;
  const fetch = new Map<string, ListedEntry>();
  const refused = new Map<string, ListedEntry>();
  const kept = new Map<string, { node: FileNode; seeded: boolean; row?: ListedIndexRow }>();
  let n = 0;
  for (const entry of options.listing.entries.values()) {
    if (entry.type !== 'file') continue;
    if (++n % 4096 === 0) options.signal.throwIfAborted();
    const prior = await basis.node(entry.rel);
    if (index) {
      const row = index.get(entry.key);
      if (row && sameVersion(entry, row.listed) && holds(prior, entry) && prior.object === row.object) {
        kept.set(entry.key, { node: prior, seeded: false, row });
        continue;
      }
    } else if (holds(prior, entry) && options.hasObject(prior.object)) {
      kept.set(entry.key, { node: prior, seeded: true });
      continue;
    }
    if (entry.size > options.maxFileBytes) refused.set(entry.key, entry);
    else fetch.set(entry.key, entry);
  }
  return { fetch, refused, kept };
}

/** A file fetched into the store: its object, and whether the index may record its listed version. */
export interface FetchedFile {
  readonly object: string;
  /** False for a racily-clean file (fetched again next time). */
  readonly indexable: boolean;
}

export interface BuildFromListingOptions {
  readonly store: ObjectStore;
  readonly basis: BasisLookup;
  /** The basis root's id (its unchanged directories are shared by id). */
  readonly basisRoot: string | null;
  readonly listing: Listing;
  readonly plan: ListingPlan;
  readonly fetched: ReadonlyMap<string, FetchedFile>;
  /** May a seeded file's listed version enter the index (not racily clean)? */
  readonly seedIndexable: (entry: ListedEntry) => boolean;
  /** The index the plan used (rows of files the listing could not see are carried over). */
  readonly index: ListedIndex | null;
  /** Keep basis entries the listing does not name (upload-only). */
  readonly keepMissing: boolean;
  readonly signal: AbortSignal;
}

export interface ListingBuild {
  readonly root: string;
  readonly files: number;
  readonly bytes: number;
  readonly entries: number;
  /** Files new to the revision or whose content or mode differ from the basis. */
  readonly changedFiles: number;
  /** Files the fetch did not give (changed while fetched): their basis node, if any, was kept. */
  readonly unstableFiles: number;
  readonly newTrees: number;
  readonly keptEntries: number;
  /** Directories whose basis tree was taken unchanged. */
  readonly reusedDirs: number;
  /** The index for the built revision. */
  readonly index: Map<string, ListedIndexRow>;
  /** False when `index` holds exactly the rows of the index the plan used (nothing to write). */
  readonly indexChanged: boolean;
}

const sameAs = (node: TreeNode, before: TreeNode | undefined) => before !== undefined && sameNode(node, before);

const versionOf = (e: ListedEntry): ListedVersion => ({ size: e.size, mode: e.mode, mtimeNs: e.mtimeNs, ctimeNs: e.ctimeNs, ino: e.ino, dev: e.dev });

export async function buildFromListing(options: BuildFromListingOptions): Promise<ListingBuild> {
  const { store, basis, listing, plan, fetched, signal } = options;
  // Children of each listed directory, in listing order.
  const children = new Map<string, ListedEntry[]>();
  for (const entry of listing.entries.values()) {
    const slash = entry.rel.lastIndexOf(0x2f);
    const parent = slash < 0 ? '' : keyOf(entry.rel.subarray(0, slash));
    let list = children.get(parent);
    if (!list) children.set(parent, (list = []));
    list.push(entry);
  }
  const index = new Map<string, ListedIndexRow>();
  const out = { files: 0, bytes: 0, entries: 0, changedFiles: 0, unstableFiles: 0, newTrees: 0, keptEntries: 0, reusedDirs: 0 };
  // Basis entries the listing does not name are kept (upload-only, or a listing that is incomplete).
  const keepUnlisted = options.keepMissing || listing.truncated;

  const keep = (nodes: TreeNode[], node: TreeNode, key: string) => {
    nodes.push(node);
    out.keptEntries += 1;
    carry(node, key);
  };
  // A kept node keeps the index rows of the files below it (the sandbox did not list them).
  const carry = (node: TreeNode, key: string) => {
    if (!options.index) return;
    if (node.type === 'f') {
      const row = options.index.get(key);
      if (row && row.object === node.object) index.set(key, row);
    } else if (node.type === 'd') {
      const prefix = `${key}/`;
      for (const [k, row] of options.index) if (k.startsWith(prefix)) index.set(k, row);
    }
  };

  const directory = async (key: string, rel: Buffer, priorTree: string | null): Promise<string> => {
    signal.throwIfAborted();
    const prior = priorTree === null ? null : await basis.dir(rel);
    const nodes: TreeNode[] = [];
    const named = new Set<string>();
    for (const entry of children.get(key) ?? []) {
      const name = entry.rel.subarray(entry.rel.lastIndexOf(0x2f) + 1);
      const nameKey = keyOf(name);
      named.add(nameKey);
      const before = prior?.get(nameKey);
      switch (entry.type) {
        case 'dir': {
          const tree = await directory(entry.key, entry.rel, before?.type === 'd' ? before.tree : null);
          nodes.push({ type: 'd', name, mode: listedDirMode(entry.mode), tree });
          break;
        }
        case 'closed-dir':
          // Unreadable in the sandbox: what the basis has there stays, whole.
          if (before) keep(nodes, before, entry.key);
          break;
        case 'symlink':
          nodes.push({ type: 'l', name, target: entry.target! });
          break;
        case 'fifo': {
          const mode = listedFifoMode(entry.mode);
          const same = before?.type === 'p' && before.mode === mode && sameMtime(before.mtimeNs, entry.mtimeNs);
          nodes.push(same ? before : { type: 'p', name, mode, mtimeNs: storedMtimeNs(entry.mtimeNs) });
          break;
        }
        case 'file': {
          const node = file(entry, name, before);
          if (node) nodes.push(node);
          break;
        }
      }
    }
    if (prior && keepUnlisted) for (const [nameKey, node] of prior) if (!named.has(nameKey)) keep(nodes, node, key === '' ? nameKey : `${key}/${nameKey}`);
    for (const node of nodes) {
      out.entries += 1;
      if (node.type === 'f') {
        out.files += 1;
        out.bytes += node.size;
      }
    }
    if (priorTree !== null && prior && nodes.length === prior.size && nodes.every((n) => sameAs(n, prior.get(keyOf(n.name))))) {
      out.reusedDirs += 1;
      return priorTree;
    }
    const { id, written } = await store.putTree(nodes, priorTree ?? undefined);
    if (written) out.newTrees += 1;
    return id;
  };

  const file = (entry: ListedEntry, name: Buffer, before: TreeNode | undefined): FileNode | null => {
    const kept = plan.kept.get(entry.key);
    if (kept) {
      if (kept.row) index.set(entry.key, kept.row);
      else if (options.seedIndexable(entry)) index.set(entry.key, { listed: versionOf(entry), object: kept.node.object });
      return kept.node;
    }
    const got = fetched.get(entry.key);
    if (got) {
      const node: FileNode = { type: 'f', name, mode: listedFileMode(entry.mode), size: entry.size, object: got.object, mtimeNs: storedMtimeNs(entry.mtimeNs) };
      if (got.indexable) index.set(entry.key, { listed: versionOf(entry), object: got.object });
      if (!(before?.type === 'f' && before.object === node.object && before.mode === node.mode)) out.changedFiles += 1;
      return node;
    }
    // Asked for and not given (changed while fetched), or over the size limit: the basis's version stays.
    if (plan.fetch.has(entry.key)) out.unstableFiles += 1;
    if (before?.type === 'f') {
      out.keptEntries += 1;
      return before;
    }
    return null;
  };

  const root = await directory('', Buffer.alloc(0), options.basisRoot);
  const before = options.index;
  const indexChanged = !before || before.size !== index.size || [...index].some(([key, row]) => before.get(key) !== row);
  return { root, index, indexChanged, ...out };
}
