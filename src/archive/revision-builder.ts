/**
 * One walk that turns a source tree into a new revision tree and its manifest entries
 * (see build-revision-tree.ts for the contract). Everything on the source side is addressed
 * beneath open directory handles, so nothing the source's owner does (symlinks, swaps, FIFOs,
 * depth) can make it read or write outside the source and the new revision.
 *
 * Per directory: list and lstat the source's names; merge them, in byte order, with the previous
 * revision's names where those are kept (upload-only, or a refused entry); create each entry in
 * the new revision (a file hard-linked from the previous revision when its size, mode and mtime
 * are unchanged, else copied and hashed in one read; a symlink verbatim; a FIFO new or linked);
 * then each subdirectory the same way; then the directory's own mode and time. File work runs
 * in a bounded pool; manifest entries keep the walk order through slots.
 */
import type { BigIntStats } from 'node:fs';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import { TaskPool } from '../lib/task-pool.js';
import type { DirHandle } from '../tree/dir-handle.js';
import { nodeTime, sameMtime } from '../tree/file-times.js';
import { makeFifo } from '../tree/make-fifo.js';
import type { TreeLimits } from '../tree/tree-limits.js';
import { copyEntry, UNREADABLE, type CopiedEntry } from './copy-entry.js';
import { describeSource, type LiveItem } from './describe-source.js';
import type { ManifestEntry } from './manifest.js';
import { bytesOf, keyOf, subtreeSize, type PriorIndex } from './prior-index.js';
import { storedMode } from './stored-mode.js';
import { childRel, decodePath, encodePath, typeOf, vanished } from './tree-walk.js';
import { WalkTally } from './walk-tally.js';

/** File copies and links in flight at once (keeps libuv's thread pool busy without flooding it). */
const FILE_CONCURRENCY = 16;
/** A link that cannot be made falls back to a copy (the basis vanished, its link count is full, another filesystem). */
const COPY_INSTEAD = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EMLINK', 'EXDEV']);
/** Errors of the new revision's filesystem that no fallback can help. */
const STORAGE_FAILURES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

export interface BuilderOptions {
  readonly index: PriorIndex;
  /** Keep entries of the previous revision the source lacks (upload-only). */
  readonly keepMissing: boolean;
  readonly limits: TreeLimits;
  readonly systemPath: string;
  readonly signal: AbortSignal;
  readonly onProgress?: (walked: number) => void;
  /** The new revision's root (hard links within the tree are made by path from it). */
  readonly destRoot: DirHandle;
}

/** One directory being built: its source (null when only the previous revision has it), its copy, its basis. */
interface Frame {
  readonly rel: Buffer;
  /** Level of this directory's children (the root's children are level 1). */
  readonly depth: number;
  readonly src: DirHandle | null;
  readonly dst: DirHandle;
  readonly basis: DirHandle | null;
  readonly prior: ReadonlyMap<string, ManifestEntry> | undefined;
  /** This directory's work in the file pool. */
  readonly tasks: Promise<void>[];
}

interface Subdir {
  readonly name: Buffer;
  readonly key: string;
  readonly slot: number;
  /** lstat of the source directory; null when it is kept from the previous revision. */
  readonly live: BigIntStats | null;
  readonly prior: ManifestEntry | undefined;
}

/** The first name of a multiply-linked inode, for the later names to link to. */
interface LinkTarget {
  readonly rel: Buffer;
  readonly entry: ManifestEntry;
}


export class RevisionBuilder {
  readonly #o: BuilderOptions;
  readonly #slots: (ManifestEntry | null)[] = [];
  readonly #pool: TaskPool;
  readonly #inodes = new Map<string, Promise<LinkTarget | null>>();
  readonly tally: WalkTally;
  linkedFiles = 0;
  copiedFiles = 0;
  keptEntries = 0;
  newFifos = 0;

  constructor(options: BuilderOptions) {
    this.#o = options;
    this.#pool = new TaskPool(FILE_CONCURRENCY, options.signal);
    this.tally = new WalkTally(options.onProgress);
  }

  /** Manifest entries in walk order (after `build`). */
  entries(): ManifestEntry[] {
    return this.#slots.filter((e): e is ManifestEntry => e !== null);
  }

  /** Builds the tree below `dst` from `src` (either may be the roots); sets the root's own mode and time. */
  async build(src: DirHandle, dst: DirHandle, basis: DirHandle | null): Promise<void> {
    try {
      await this.#directory({ rel: Buffer.alloc(0), depth: 1, src, dst, basis, prior: this.#o.index.get(''), tasks: [] });
      await this.#pool.drain();
      await this.#setDirectory(dst, src.stats, '.');
    } catch (error) {
      await this.#pool.settle();
      throw error;
    }
  }

  // Runs `work` in the bounded pool as part of `frame`.
  #schedule(frame: Frame, work: () => Promise<void>): Promise<void> {
    return this.#pool.schedule(frame.tasks, work);
  }

  #slot(entry: ManifestEntry | null): number {
    return this.#slots.push(entry) - 1;
  }

  // A typed error for a failure on the new revision's side (it fails the build).
  #destError(error: unknown, operation: string, rel: Buffer): Error {
    return classifyStorageError(error, `persist ${operation}`, encodePath(rel) || '.');
  }

  async #directory(frame: Frame): Promise<void> {
    this.#pool.check();
    const { items: live, refused, keepAll } = frame.src ? await describeSource(frame.src, frame.rel, this.tally, this.#o.limits.maxEntries) : { items: [], refused: new Set<string>(), keepAll: true };
    const liveKeys = new Set(live.map((i) => i.key));
    // Previous entries the source lacks that stay: all of them when upload-only or when the
    // listing is incomplete, else the refused ones (entries refused later are kept by `#keep`).
    const keepMissing = keepAll || this.#o.keepMissing;
    const kept = frame.prior ? [...frame.prior.keys()].filter((k) => !liveKeys.has(k) && (keepMissing || refused.has(k))).sort() : [];
    const subdirs: Subdir[] = [];
    let k = 0;
    for (const item of live) {
      while (k < kept.length && kept[k]! < item.key) await this.#keep(frame, kept[k++]!, subdirs);
      await this.#live(frame, item, subdirs);
    }
    while (k < kept.length) await this.#keep(frame, kept[k++]!, subdirs);

    for (const sub of subdirs) await this.#subdirectory(frame, sub);
    await Promise.all(frame.tasks);
    this.#pool.check();
    // A source directory removed while it was read (`rm -rf` under the walk): its entries vanished with it.
    if (frame.src && (await frame.src.stat()).nlink === 0n) this.#vanishedDirectory(frame.rel);
  }

  /**
   * Counts a directory that vanished during the walk as all the entries the previous revision
   * had below it: a tree being wiped shows up as the files that went missing, not as one entry.
   */
  #vanishedDirectory(rel: Buffer): void {
    this.tally.vanished += Math.max(1, subtreeSize(this.#o.index, keyOf(rel)));
  }

  // One entry of the source.
  async #live(frame: Frame, item: LiveItem, subdirs: Subdir[]): Promise<void> {
    this.tally.tick();
    const rel = childRel(frame.rel, item.name);
    const { limits } = this.#o;
    if (this.tally.walked > limits.maxEntries) {
      this.tally.refuse('entries', rel, `over the ${limits.maxEntries}-entry limit`);
      return this.#keep(frame, item.key, subdirs);
    }
    if (rel.length > limits.maxPathBytes) {
      this.tally.refuse('path-bytes', rel, `path is ${rel.length} bytes, over the ${limits.maxPathBytes}-byte limit`);
      return this.#keep(frame, item.key, subdirs);
    }
    const p = encodePath(rel);
    const { stats } = item;
    const mode = storedMode(stats.mode & 0o7777n);
    if (mode !== Number(stats.mode & 0o7777n)) this.tally.strippedModes += 1;
    switch (typeOf(stats)) {
      case 'dir': {
        if (frame.depth >= limits.maxDepth) {
          this.tally.refuse('depth', rel, `directory at depth ${frame.depth} reaches the ${limits.maxDepth}-level limit`);
          return this.#keep(frame, item.key, subdirs);
        }
        await frame.dst.mkdir(item.name, 0o700).catch((e: unknown) => Promise.reject(this.#destError(e, 'mkdir', rel)));
        const slot = this.#slot({ p, t: 'd', m: mode });
        subdirs.push({ name: item.name, key: item.key, slot, live: stats, prior: frame.prior?.get(item.key) });
        return;
      }
      case 'file':
        return this.#file(frame, item, rel, p, mode);
      case 'symlink':
        await frame.dst.symlink(item.target!, item.name).catch((e: unknown) => Promise.reject(this.#destError(e, 'symlink', rel)));
        this.#slot({ p, t: 'l', m: 0, l: encodePath(item.target!) });
        return;
      case 'fifo':
        return this.#fifo(frame, item, rel, p, mode);
      case 'socket':
        // A socket inode carries nothing restorable (its listener is gone after a restore).
        this.tally.skipped.sockets += 1;
        return;
      default:
        // Block and character devices: never archived.
        this.tally.skipped.devices += 1;
        return;
    }
  }

  // Takes the previous revision's entry `key` of this directory into the new revision.
  async #keep(frame: Frame, key: string, subdirs: Subdir[]): Promise<void> {
    const entry = frame.prior?.get(key);
    if (!entry) return;
    const name = bytesOf(key);
    const rel = childRel(frame.rel, name);
    if (entry.t === 'd') {
      await frame.dst.mkdir(name, 0o700).catch((e: unknown) => Promise.reject(this.#destError(e, 'mkdir', rel)));
      const slot = this.#slot(entry);
      subdirs.push({ name, key, slot, live: null, prior: entry });
      this.keptEntries += 1;
    } else if (entry.t === 'l' && entry.l !== undefined) {
      await frame.dst.symlink(decodePath(entry.l), name).catch((e: unknown) => Promise.reject(this.#destError(e, 'symlink', rel)));
      this.#slot(entry);
      this.keptEntries += 1;
    } else if ((entry.t === 'f' || entry.t === 'p') && frame.basis) {
      const slot = this.#slot(entry);
      await this.#schedule(frame, () => this.#keepLinked(frame, name, rel, slot));
    }
  }

  // Hard-links a kept file (or FIFO) from the previous revision; copies it when a link cannot be made.
  async #keepLinked(frame: Frame, name: Buffer, rel: Buffer, slot: number): Promise<void> {
    try {
      await frame.dst.link(frame.basis!, name, name);
      this.keptEntries += 1;
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'EMLINK' || code === 'EXDEV') {
        const entry = this.#slots[slot]!;
        if (entry.t === 'f') {
          const copied = await this.#copy(frame.basis!, frame.dst, name, rel, Number.MAX_SAFE_INTEGER);
          const ok = copied !== null && copied !== 'refused';
          this.#slots[slot] = ok ? { ...entry, i: copied.i } : null;
          if (ok) this.keptEntries += 1;
          return;
        }
      }
      // The previous revision lacks it (a damaged revision): nothing to keep.
      if (code && COPY_INSTEAD.has(code)) {
        this.#slots[slot] = null;
        return;
      }
      throw this.#destError(error, 'link', rel);
    }
  }

  async #file(frame: Frame, item: LiveItem, rel: Buffer, p: string, mode: number): Promise<void> {
    const slot = this.#slot(null);
    const { stats } = item;
    // Later names of a multiply-linked inode link to the first name's copy.
    let resolveTarget: ((target: LinkTarget | null) => void) | undefined;
    if (stats.nlink > 1n) {
      const key = `${stats.dev}:${stats.ino}`;
      const first = this.#inodes.get(key);
      if (first) {
        await this.#schedule(frame, async () => {
          const target = await first;
          if (target && (await this.#linkWithin(frame, item.name, target))) {
            this.#slots[slot] = { ...target.entry, p };
            this.tally.hardLinks += 1;
            return;
          }
          await this.#fileWork(frame, item, rel, p, mode, slot);
        });
        return;
      }
      this.#inodes.set(key, new Promise((resolve) => (resolveTarget = resolve)));
    }
    try {
      await this.#schedule(frame, async () => {
        try {
          await this.#fileWork(frame, item, rel, p, mode, slot);
        } finally {
          const entry = this.#slots[slot];
          resolveTarget?.(entry ? { rel, entry } : null);
        }
      });
    } catch (error) {
      // Never scheduled: later names must not wait for it.
      resolveTarget?.(null);
      throw error;
    }
  }

  // Links `name` to the first name of its inode in the new revision; false when it cannot (then it is copied).
  async #linkWithin(frame: Frame, name: Buffer, target: LinkTarget): Promise<boolean> {
    try {
      await frame.dst.linkPath(this.#o.destRoot.privatePath(target.rel), name);
      return true;
    } catch (error) {
      if (STORAGE_FAILURES.has(errnoOf(error) ?? '')) throw this.#destError(error, 'link', target.rel);
      return false;
    }
  }

  // A file of the source: linked from the previous revision when unchanged, else copied.
  async #fileWork(frame: Frame, item: LiveItem, rel: Buffer, p: string, mode: number, slot: number): Promise<void> {
    const { stats, name } = item;
    const before = frame.prior?.get(item.key);
    if (frame.basis && before?.t === 'f' && before.h !== undefined && before.s === Number(stats.size) && before.m === mode) {
      // A manifest written before mtimes were recorded: the previous revision's file has the time.
      const basisTime = before.n === undefined ? (await frame.basis.lstat(name).catch(() => null))?.mtimeNs : undefined;
      const unchanged = before.n !== undefined ? sameMtime(stats.mtimeNs, BigInt(before.n)) : basisTime !== undefined && sameMtime(basisTime, stats.mtimeNs);
      if (unchanged) {
        try {
          await frame.dst.link(frame.basis, name, name);
          const i = before.i ?? Number((await frame.dst.lstat(name)).ino);
          this.#slots[slot] = { p, t: 'f', m: mode, s: before.s, h: before.h, i, n: stats.mtimeNs.toString() };
          this.linkedFiles += 1;
          return;
        } catch (error) {
          if (!COPY_INSTEAD.has(errnoOf(error) ?? '')) throw this.#destError(error, 'link', rel);
        }
      }
    }
    const copied = await this.#copy(frame.src!, frame.dst, name, rel, this.#o.limits.maxFileBytes);
    if (copied === 'refused' || copied === null) {
      // Gone, replaced by a non-file, unreadable or too large: the previous state (if any) stays.
      if (copied === null && !this.#o.keepMissing) return;
      const kept = frame.prior?.get(item.key);
      if ((kept?.t === 'f' || kept?.t === 'p') && frame.basis) {
        this.#slots[slot] = kept;
        await this.#keepLinked(frame, name, rel, slot);
      }
      return;
    }
    this.#slots[slot] = { p, t: 'f', ...copied };
    this.copiedFiles += 1;
  }

  // `copyEntry`, with its outcomes counted: null when the source vanished, 'refused' when it was refused.
  async #copy(from: DirHandle, to: DirHandle, name: Buffer, rel: Buffer, maxBytes: number): Promise<CopiedEntry | null | 'refused'> {
    const outcome = await copyEntry(from, to, name, rel, { maxBytes, signal: this.#o.signal });
    switch (outcome.kind) {
      case 'copied':
        return outcome.entry;
      case 'vanished':
        this.tally.vanished += 1;
        return null;
      case 'unreadable':
        this.tally.refuse('unreadable', rel, `cannot be opened (${outcome.errno})`);
        return 'refused';
      case 'too-large':
        this.tally.refuse('file-bytes', rel, `file of ${outcome.bytes} bytes is over the ${maxBytes}-byte limit`);
        return 'refused';
    }
  }

  async #fifo(frame: Frame, item: LiveItem, rel: Buffer, p: string, mode: number): Promise<void> {
    const before = frame.prior?.get(item.key);
    const entry: ManifestEntry = { p, t: 'p', m: mode, n: item.stats.mtimeNs.toString() };
    const slot = this.#slot(entry);
    if (frame.basis && before?.t === 'p' && before.m === mode && before.n !== undefined && sameMtime(item.stats.mtimeNs, BigInt(before.n))) {
      const linked = await frame.dst.link(frame.basis, item.name, item.name).then(
        () => true,
        (error: unknown) => (COPY_INSTEAD.has(errnoOf(error) ?? '') ? false : Promise.reject(this.#destError(error, 'link', rel))),
      );
      if (linked) return;
    }
    if (this.newFifos >= this.#o.limits.maxNewFifos) {
      this.#slots[slot] = null;
      this.tally.refuse('fifos', rel, `more than ${this.#o.limits.maxNewFifos} new FIFOs in one persist`);
      return;
    }
    this.newFifos += 1;
    await this.#schedule(frame, () =>
      makeFifo(frame.dst, item.name, mode, this.#o.systemPath, this.#o.signal).catch((error: unknown) => Promise.reject(this.#destError(error, 'mkfifo', rel))),
    );
  }

  async #subdirectory(frame: Frame, sub: Subdir): Promise<void> {
    const rel = childRel(frame.rel, sub.name);
    let src: DirHandle | null = null;
    if (sub.live && frame.src) {
      try {
        src = await frame.src.openDir(sub.name);
      } catch (error) {
        if (vanished(error)) this.#vanishedDirectory(rel);
        else if (UNREADABLE.has(errnoOf(error) ?? '')) this.tally.refuse('unreadable', rel, `directory cannot be opened (${errnoOf(error)})`);
        else throw classifyStorageError(error, 'persist read', encodePath(rel));
        // Gone from the source: a reconcile drops it, unless it was refused or upload-only keeps it.
        const keep = sub.prior?.t === 'd' && (this.#o.keepMissing || !vanished(error));
        if (!keep) {
          this.#slots[sub.slot] = null;
          await frame.dst.rmdir(sub.name).catch((e: unknown) => Promise.reject(this.#destError(e, 'rmdir', rel)));
          return;
        }
        this.#slots[sub.slot] = sub.prior!;
      }
    }
    let dst: DirHandle;
    try {
      dst = await frame.dst.openDir(sub.name);
    } catch (error) {
      await src?.close();
      throw this.#destError(error, 'open', rel);
    }
    let basis: DirHandle | null = null;
    const tasks: Promise<void>[] = [];
    try {
      if (frame.basis && sub.prior?.t === 'd') basis = await frame.basis.openDir(sub.name).catch(() => null);
      await this.#directory({ rel, depth: frame.depth + 1, src, dst, basis, prior: this.#o.index.get(keyOf(rel)), tasks });
      if (src) await this.#setDirectory(dst, src.stats, encodePath(rel));
      else if (sub.prior) await dst.chmod(sub.prior.m).catch((e: unknown) => Promise.reject(this.#destError(e, 'chmod', rel)));
    } finally {
      // A closed descriptor number is reused by the next open: no task may still address these handles.
      await Promise.allSettled(tasks);
      await src?.close();
      await basis?.close();
      await dst.close();
    }
  }

  // The new directory gets the source directory's mode and mtime (after its entries are made).
  async #setDirectory(dst: DirHandle, stats: BigIntStats, label: string): Promise<void> {
    try {
      await dst.chmod(storedMode(stats.mode & 0o7777n));
      await dst.setTimes(nodeTime(stats.mtimeNs));
    } catch (error) {
      throw classifyStorageError(error, 'persist chmod', label);
    }
  }
}
