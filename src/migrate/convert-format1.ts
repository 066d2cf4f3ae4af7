/**
 * Converts a committed format 1 revision (its hard-linked directory and its manifest) into
 * format 2 objects and trees, in one walk of the directory by handles (nothing followed):
 *
 * - a file's content becomes an object (stored once per archive: a content the store has costs no
 *   write); a file whose inode this run already stored for an earlier revision (format 1 shares
 *   unchanged files across revisions as hard links) is not read again when that revision's
 *   object is the one this revision's manifest names: one read per inode per run;
 * - names of one inode within this revision get one `linkKey` (names shared only with other
 *   revisions get none);
 * - times come from the manifest (`n`, the exact time of the live entry) where it has them,
 *   else from the directory (a file's copy carries its time cut to microseconds);
 * - directories, symlinks and FIFOs keep their modes and targets; anything else (a socket or
 *   device never belongs in a format 1 revision) is counted as `skipped`, and the listing check
 *   that follows reports it as missing.
 *
 * Objects and trees are written as the walk goes; nothing references them until a record does.
 */
import type { BigIntStats } from 'node:fs';
import type { ManifestEntry, RevisionManifest } from '../archive/manifest.js';
import type { ObjectStore } from '../archive/object-store.js';
import { storedMode } from '../archive/stored-mode.js';
import type { TreeNode } from '../archive/tree-object.js';
import { childRel, encodePath, typeOf } from '../archive/tree-walk.js';
import { classifyStorageError } from '../errors/classify-storage-error.js';
import { mapBounded } from '../lib/map-bounded.js';
import { TaskPool } from '../lib/task-pool.js';
import { isSparse } from '../tree/copy-file-data.js';
import { DirHandle, READ_FILE_FLAGS } from '../tree/dir-handle.js';
import type { InodeObjects } from './inode-objects.js';

/** Files read and stored at once (as in a persist). */
const FILE_CONCURRENCY = 16;
/** lstat calls of one directory in flight at once. */
const LSTAT_CONCURRENCY = 16;

export interface ConvertOptions {
  readonly store: ObjectStore;
  /** The revision's manifest (its times, and what the inode cache may confirm). */
  readonly manifest: RevisionManifest;
  /** Objects of inodes already read in this run. */
  readonly inodes: InodeObjects;
  readonly signal: AbortSignal;
  /** Files converted so far. */
  readonly onFile?: (files: number) => void;
}

export interface Converted {
  readonly root: string;
  readonly files: number;
  readonly bytes: number;
  /** Every path below the root. */
  readonly entries: number;
  /** Files whose content was read (the rest were known by their inode). */
  readonly readFiles: number;
  readonly newObjects: number;
  readonly storedBytes: number;
  readonly newTrees: number;
  /** Entries that format 2 cannot hold (sockets, devices). */
  readonly skipped: number;
}

// One entry of the walk, its object filled in by a background task for files.
type Pending =
  | { kind: 'f'; name: Buffer; mode: number; size: number; mtimeNs: bigint; inode: string; object?: string }
  | { kind: 'd'; name: Buffer; mode: number; entries: Pending[] }
  | { kind: 'l'; name: Buffer; target: Buffer }
  | { kind: 'p'; name: Buffer; mode: number; mtimeNs: bigint };

export class Format1Converter {
  readonly #o: ConvertOptions;
  readonly #pool: TaskPool;
  readonly #times = new Map<string, bigint>();
  readonly #hashes = new Map<string, string>();
  readonly #names = new Map<string, number>();
  files = 0;
  bytes = 0;
  entries = 0;
  readFiles = 0;
  newObjects = 0;
  storedBytes = 0;
  newTrees = 0;
  skipped = 0;

  constructor(options: ConvertOptions) {
    this.#o = options;
    this.#pool = new TaskPool(FILE_CONCURRENCY, options.signal);
    for (const e of options.manifest.entries as readonly ManifestEntry[]) {
      if (e.n !== undefined && /^-?\d{1,25}$/.test(e.n)) this.#times.set(e.p, BigInt(e.n));
      if (e.t === 'f' && e.h !== undefined) this.#hashes.set(e.p, e.h);
    }
  }

  /** Converts the revision directory `dir`; returns its root tree and counts. */
  async convert(dir: string): Promise<Converted> {
    const root = await DirHandle.open(dir).catch((error: unknown) => Promise.reject(classifyStorageError(error, 'open format 1 revision', dir)));
    let entries: Pending[];
    try {
      entries = await this.#walk(root, Buffer.alloc(0));
      await this.#pool.drain();
    } catch (error) {
      await this.#pool.settle();
      throw error;
    } finally {
      await root.close();
    }
    const rootTree = await this.#store(entries);
    return { root: rootTree, files: this.files, bytes: this.bytes, entries: this.entries, readFiles: this.readFiles, newObjects: this.newObjects, storedBytes: this.storedBytes, newTrees: this.newTrees, skipped: this.skipped };
  }

  // Lists one directory (and, depth first, the ones below it); file contents are stored in the background.
  async #walk(dir: DirHandle, rel: Buffer): Promise<Pending[]> {
    this.#pool.check();
    const names = await dir.names();
    const stats = await mapBounded(names, LSTAT_CONCURRENCY, (name) => dir.lstat(name));
    const out: Pending[] = [];
    const tasks: Promise<void>[] = [];
    try {
      for (const [i, name] of names.entries()) {
        const st = stats[i]!;
        const path = childRel(rel, name);
        const p = encodePath(path);
        const mode = storedMode(st.mode & 0o7777n);
        switch (typeOf(st)) {
          case 'dir': {
            const child = await dir.openDir(name);
            try {
              out.push({ kind: 'd', name, mode, entries: await this.#walk(child, path) });
            } finally {
              await child.close();
            }
            break;
          }
          case 'file': {
            const file: Pending & { kind: 'f' } = { kind: 'f', name, mode, size: Number(st.size), mtimeNs: this.#times.get(p) ?? st.mtimeNs, inode: `${st.dev}:${st.ino}` };
            this.#names.set(file.inode, (this.#names.get(file.inode) ?? 0) + 1);
            out.push(file);
            await this.#pool.schedule(tasks, async () => {
              file.object = await this.#object(dir, name, p, st);
              this.files += 1;
              this.bytes += file.size;
              this.#o.onFile?.(this.files);
            });
            break;
          }
          case 'symlink':
            out.push({ kind: 'l', name, target: await dir.readlink(name) });
            break;
          case 'fifo':
            out.push({ kind: 'p', name, mode, mtimeNs: this.#times.get(p) ?? st.mtimeNs });
            break;
          default:
            this.skipped += 1;
        }
      }
    } finally {
      // The tasks address entries through this directory's handle: it is closed only after them.
      await Promise.allSettled(tasks);
    }
    return out;
  }

  // The object of one file: known by its inode (and confirmed by the manifest), else read and stored.
  async #object(dir: DirHandle, name: Buffer, p: string, st: BigIntStats): Promise<string> {
    const known = this.#o.inodes.get(st);
    if (known !== undefined && known === this.#hashes.get(p) && (await this.#o.store.reuseObject(known))) return known;
    const handle = await dir.openFile(name, READ_FILE_FLAGS);
    try {
      const opened = await handle.stat({ bigint: true });
      const stored = await this.#o.store.putObject(handle, Number(opened.size), isSparse(opened), this.#o.signal);
      this.readFiles += 1;
      if (stored.written) {
        this.newObjects += 1;
        this.storedBytes += stored.bytes;
      }
      // A revision never changes: the inode read now is what the next revisions link to.
      if (stored.bytes === Number(opened.size)) this.#o.inodes.set(opened, stored.id);
      return stored.id;
    } finally {
      await handle.close();
    }
  }

  // Writes the trees bottom up; returns the id of the tree of `entries`.
  async #store(entries: readonly Pending[]): Promise<string> {
    const nodes: TreeNode[] = [];
    for (const e of entries) {
      if (e.kind === 'd') nodes.push({ type: 'd', name: e.name, mode: e.mode, tree: await this.#store(e.entries) });
      else if (e.kind === 'l') nodes.push({ type: 'l', name: e.name, target: e.target });
      else if (e.kind === 'p') nodes.push({ type: 'p', name: e.name, mode: e.mode, mtimeNs: e.mtimeNs });
      else {
        const linked = (this.#names.get(e.inode) ?? 0) > 1;
        nodes.push({ type: 'f', name: e.name, mode: e.mode, size: e.size, object: e.object!, mtimeNs: e.mtimeNs, ...(linked ? { linkKey: e.inode.slice(e.inode.indexOf(':') + 1) } : {}) });
      }
    }
    this.entries += nodes.length;
    const { id, written } = await this.#o.store.putTree(nodes);
    if (written) this.newTrees += 1;
    return id;
  }
}
