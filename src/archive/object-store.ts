/**
 * Format 2's content-addressed store (docs/archive-format.md): file contents as objects and
 * directories as tree objects, each stored once per archive root under its SHA-256. Writes go to
 * `tmp/` and are renamed into place; an id that already exists is kept (same id, same bytes), so
 * identical files across revisions, workspaces and bases cost nothing after the first.
 * Durability is the caller's: one `syncfs` of the archive before the revision record is written.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ObjectWriter } from './object-writer.js';
import { storeTempName, storeTempPrefix } from './archive-paths.js';
import { closeSync, constants, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, utimesSync, writeSync } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, stat, unlink, utimes, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import { copyFileData } from '../tree/copy-file-data.js';
import { borrowBuffer, READ_BUFFER_BYTES, releaseBuffer } from '../tree/read-buffers.js';
import { encodeSortedTree, OBJECT_ID_PATTERN, sha256, sortNodes, TreeFormatError, type TreeNode } from './tree-object.js';
import { packFiles, PackReader, writePackSync, type WrittenPack } from './pack-file.js';
import { fsyncDir } from './fsync.js';
import type { Located } from './pack-lookup.js';
import type { PackSlot } from './pack-index.js';
import type { ReadAt } from '../tree/read-at.js';
import { PackSet } from './pack-set.js';
import { StorageIoError } from '../errors/storage-io-error.js';
import { applyTreePatch, decodeStoredTree, decodeWholeTree, encodeTreePatch, PATCH_PREFIX, patchBaseOf, patchBetween, type StoredTree } from './tree-patch.js';

/** Files up to this size are read whole and hashed before anything is written (a known object costs no write). */
const SMALL_OBJECT_BYTES = 1024 * 1024;
/** Trees kept decoded in memory (they never change; a persist reads the previous revision's). */
const TREE_CACHE_ENTRIES = 20_000;
/** The shared store's directory under the archive root: `.` is not a workspace-id character, so no workspace can collide with it. */
export const STORE_DIR = '.store';
/** Contents up to this size are gathered in memory before they are stored (`putContent`). */
const IN_MEMORY_BYTES = 1024 * 1024;
/** Objects and trees are read-only on disk. */
const OBJECT_MODE = 0o444;
/** Trees up to this size (about 500 entries) are written without the thread pool (`putPreparedTreeSync`). */
export const SYNC_TREE_BYTES = 64 * 1024;
/** Bytes of a tree file that say whether it is a patch, and of what (tree-patch.ts). */
const PATCH_HEAD_BYTES = PATCH_PREFIX.length + 64;

export interface ObjectStoreOptions {
  /**
   * Store a changed directory as a patch of its previous tree when the patch is at most half the
   * bytes of the whole tree (`FLEET_ARCHIVE_TREE_PATCHES`). Reading patches needs no option.
   */
  readonly treePatches?: boolean;
  /**
   * Write the small objects the object writer's thread places as packs (`FLEET_ARCHIVE_PACKS`;
   * docs/archive-format.md, "Packs"). Reading packed objects needs no option.
   */
  readonly packObjects?: boolean;
}

/** Pack readers a store keeps open at most (a restore reads pack after pack). */
const OPEN_PACKS = 32;
/** Times a read looks again for an object whose pack was gone (each time another GC repacked it meanwhile). */
const PACK_GONE_RETRIES = 3;

/** A tree as read from disk: its entries, and the tree it is a patch of (null: stored whole). */
export interface LoadedTree {
  readonly nodes: TreeNode[];
  readonly base: string | null;
}

/** What the store holds: file contents (objects) and directories (trees). */
export type StoredKind = 'object' | 'tree';

export interface StoredObject {
  readonly id: string;
  readonly bytes: number;
  /** True when this call wrote it (false: the archive already had it). */
  readonly written: boolean;
}

/** A stored tree: `written` when this call wrote it, `patch` when as a patch of the tree it replaces. */
export interface PutTreeResult {
  readonly id: string;
  readonly written: boolean;
  readonly patch?: boolean;
}

/** A tree in its canonical form, with its id: what `putPreparedTree` stores. */
export interface PreparedTree {
  readonly sorted: TreeNode[];
  readonly bytes: Buffer;
  readonly id: string;
}

/** Sorts and encodes a tree and hashes it (no I/O). */
export function prepareTree(nodes: readonly TreeNode[]): PreparedTree {
  const sorted = sortNodes(nodes);
  const bytes = encodeSortedTree(sorted);
  return { sorted, bytes, id: sha256(bytes) };
}

export class ObjectStore {
  readonly #fanout = new Set<string>();
  readonly #trees = new Map<string, TreeNode[]>();
  #tmpReady = false;
  /**
   * Temporaries are named `<kind>-<this store's random prefix>-<count>`: unique among the
   * processes sharing the archive root without a random draw per object (a first persist names a
   * temporary per file). O_EXCL still refuses any name that exists.
   */
  readonly #tmpPrefix = randomBytes(8).toString('hex');
  #tmpCount = 0;
  #writers = 0;
  readonly #tmpDir: string;
  readonly #objectsDir: string;
  readonly #treesDir: string;

  readonly #treePatches: boolean;
  readonly #packObjects: boolean;
  /** The packs of this store this process knows. */
  readonly packs: PackSet;
  readonly #packReaders = new Map<string, PackReader>();

  /** `root` is the archive root (the store lives in its `.store`). */
  constructor(
    readonly root: string,
    options: ObjectStoreOptions = {},
  ) {
    this.#treePatches = options.treePatches ?? false;
    this.#packObjects = options.packObjects ?? false;
    this.packs = new PackSet(path.join(root, STORE_DIR, 'packs'));
    this.#tmpDir = path.join(root, STORE_DIR, 'tmp');
    this.#objectsDir = path.join(root, STORE_DIR, 'objects');
    this.#treesDir = path.join(root, STORE_DIR, 'trees');
  }

  // The paths are joined as text under directories normalised once: a restore asks for one per
  // file, and `path.join` normalising each was a quarter of a restore's allocations (run AG).
  objectPath(id: string): string {
    return `${this.#objectsDir}/${id.slice(0, 2)}/${id}`;
  }

  treePath(id: string): string {
    return `${this.#treesDir}/${id.slice(0, 2)}/${id}`;
  }

  /** The fan-out directory of objects or of trees (`{ab}/{id}` below it). */
  kindDir(kind: StoredKind): string {
    return kind === 'object' ? this.#objectsDir : this.#treesDir;
  }

  /** The file of an object or a tree. */
  pathOf(kind: StoredKind, id: string): string {
    return kind === 'object' ? this.objectPath(id) : this.treePath(id);
  }

  /** Where temporaries of this store live (litter after a crash). */
  get tmpDir(): string {
    return this.#tmpDir;
  }

  /** Whether the store holds the object, as a file or in a pack (listed again on a miss if the packs may have changed). */
  async hasObject(id: string): Promise<boolean> {
    return (await exists(this.objectPath(checkId(id)))) || this.packs.findOrRefresh(id) !== undefined;
  }

  /**
   * `hasObject` as one synchronous stat (no thread-pool round trip: for checks of many objects
   * in a row, which the dentry cache answers in microseconds).
   */
  hasObjectSync(id: string): boolean {
    return statSync(this.objectPath(checkId(id)), { throwIfNoEntry: false }) !== undefined || this.packs.findOrRefresh(id) !== undefined;
  }

  async hasTree(id: string): Promise<boolean> {
    return exists(this.treePath(checkId(id)));
  }

  /**
   * True when the object exists; its times are refreshed (like any reuse), so garbage collection
   * keeps it for its grace period while the revision that names it is committed.
   */
  async reuseObject(id: string): Promise<boolean> {
    return this.#reuse(this.objectPath(checkId(id)));
  }

  /** An object's bytes. */
  async readObject(id: string): Promise<Buffer> {
    checkId(id);
    const packed = this.packs.find(id);
    if (packed === undefined) {
      try {
        return await readFile(this.objectPath(id), { flag: constants.O_RDONLY | constants.O_NOFOLLOW });
      } catch (error) {
        return this.#readPackedWhole(id, this.#packedOr(error, id));
      }
    }
    return this.#readPackedWhole(id, packed);
  }

  async #readPackedWhole(id: string, found: Located): Promise<Buffer> {
    const handle = await this.#openPacked(id, found);
    try {
      return await handle.readAll();
    } finally {
      await handle.close();
    }
  }

  /** Opens an object for reading: its own file, or its slice of a pack (packs this process knows first, then its file, then the packs listed again). */
  async openObject(id: string): Promise<ObjectHandle> {
    checkId(id);
    const packed = this.packs.find(id);
    if (packed) return this.#openPacked(id, packed);
    try {
      return await open(this.objectPath(id), constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      return this.#openPacked(id, this.#packedOr(error, id));
    }
  }

  // After object `id`'s own file failed: the pack holding it (the packs listed again if need be) when the file was missing; else the file's error.
  #packedOr(error: unknown, id: string): Located {
    const found = errnoOf(error) === 'ENOENT' ? this.packs.findOrRefresh(id) : undefined;
    if (found === undefined) throw error;
    return found;
  }

  async #openPacked(id: string, found: Located): Promise<PackedObjectHandle> {
    for (let attempt = 1; ; attempt++) {
      const file = packFiles(this.packs.packsDir, found.index.packId).pack;
      try {
        return new PackedObjectHandle(await open(file, constants.O_RDONLY | constants.O_NOFOLLOW), found.slot, file);
      } catch (error) {
        found = this.#repackedOr(error, id, found, attempt);
      }
    }
  }

  /**
   * After the pack `found` named failed to open: when it is gone (the GC repacked its reachable
   * objects into another pack since this process listed it), it is forgotten and `id` looked up
   * in the packs listed again; else, or when it is in none, the open's error.
   */
  #repackedOr(error: unknown, id: string, found: Located, attempt: number): Located {
    if (errnoOf(error) !== 'ENOENT' || attempt > PACK_GONE_RETRIES) throw error;
    this.packs.forget(found.index.packId);
    const again = this.packs.findOrRefresh(id);
    if (again === undefined) throw error;
    return again;
  }

  /** Bytes of object `id` as stored (its file's size or its slot's length); undefined when it is in neither. */
  async objectSize(id: string): Promise<number | undefined> {
    checkId(id);
    const packed = this.packs.find(id);
    if (packed) return packed.slot.length;
    try {
      const stats = await lstat(this.objectPath(id));
      if (!stats.isFile()) throw Object.assign(new Error(`object ${id} is not a regular file`), { code: 'EFTYPE' });
      return stats.size;
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') throw error;
      return this.packs.findOrRefresh(id)?.slot.length;
    }
  }

  /** Reads and verifies a tree (its whole canonical bytes must hash to `id`). */
  async readTree(id: string): Promise<TreeNode[]> {
    const cached = this.#trees.get(id);
    if (cached) return cached;
    const { nodes } = await this.loadTree(id);
    this.#remember(id, nodes);
    return nodes;
  }

  #remember(id: string, nodes: TreeNode[]): void {
    if (this.#trees.size >= TREE_CACHE_ENTRIES) this.#trees.delete(this.#trees.keys().next().value!);
    this.#trees.set(id, nodes);
  }

  /**
   * Reads and verifies a tree from disk, never from the memory cache (GC and verify: a cached
   * tree could hide a deletion or damage), with the base it is a patch of. Throws the read's
   * errno error, or `TreeFormatError` (a patch whose base is missing, damaged or itself a patch).
   */
  async loadTree(id: string): Promise<LoadedTree> {
    const bytes = await readFile(this.treePath(checkId(id)));
    const stored = decodeStoredTree(bytes);
    if (stored.kind === 'whole') return loadedTree(id, bytes, stored, null);
    const base = await readFile(this.treePath(stored.patch.base)).catch((error: unknown) => Promise.reject(missingBase(id, stored.patch.base, error)));
    return loadedTree(id, bytes, stored, base);
  }

  // `loadTree` without the thread pool.
  #loadTreeSync(id: string): LoadedTree {
    const bytes = readFileSync(this.treePath(checkId(id)));
    const stored = decodeStoredTree(bytes);
    if (stored.kind === 'whole') return loadedTree(id, bytes, stored, null);
    let base: Buffer;
    try {
      base = readFileSync(this.treePath(stored.patch.base));
    } catch (error) {
      throw missingBase(id, stored.patch.base, error);
    }
    return loadedTree(id, bytes, stored, base);
  }

  /**
   * `readTree` without the thread pool: a tree from the page cache in microseconds, where the
   * round trips of an async read (open, stat, read, close) took a third of a millisecond or more
   * each, one tree after another (a restore's plan of 215 trees: 174 ms; BENCHMARKS.md, run AG).
   * A caller reading many keeps the event loop turning between them.
   */
  readTreeSync(id: string): TreeNode[] {
    const cached = this.#trees.get(id);
    if (cached) return cached;
    const { nodes } = this.#loadTreeSync(id);
    this.#remember(id, nodes);
    return nodes;
  }

  /**
   * Stores a tree; returns its id (an existing one is not written again, only refreshed).
   * `unchangedFrom` is the id of the tree this one replaces in the revision being built, which
   * that revision's basis keeps reachable: the same id is then neither written nor refreshed (an
   * unchanged directory costs no I/O). Any other id goes through the file, never the memory
   * cache: a cached tree may have been collected since it was read. A tree of up to
   * `SYNC_TREE_BYTES` is written without the thread pool.
   */
  async putTree(nodes: readonly TreeNode[], unchangedFrom?: string): Promise<PutTreeResult> {
    const prepared = prepareTree(nodes);
    return prepared.bytes.length <= SYNC_TREE_BYTES ? this.putPreparedTreeSync(prepared, unchangedFrom) : this.putPreparedTree(prepared, unchangedFrom);
  }

  /** `putTree` of a tree whose id was computed first (`prepareTree`: a walk goes on while it is written). */
  async putPreparedTree(prepared: PreparedTree, unchangedFrom?: string): Promise<PutTreeResult> {
    const { sorted, bytes, id } = prepared;
    if (id === unchangedFrom) return { id, written: false };
    let written = false;
    let patch = false;
    if (!(await this.#reuseTree(id))) {
      const patched = this.#treePatches && unchangedFrom !== undefined ? await this.#patchOf(sorted, bytes.length, unchangedFrom) : null;
      patch = patched !== null;
      const tmp = await this.#tmpFile('t');
      await this.#fill(tmp, () => tmp.handle.writeFile(patched ?? bytes));
      written = await this.#place(tmp.path, this.treePath(id), false);
    }
    // On disk now, and read back at once (the removal count, the next persist's basis).
    this.#remember(id, sorted);
    return { id, written, ...(patch ? { patch } : {}) };
  }

  /**
   * `putPreparedTree` without the thread pool, for a tree of a few kilobytes (most directories):
   * its dozen syscalls on the page cache cost less than the round trips they would take one by one.
   */
  putPreparedTreeSync(prepared: PreparedTree, unchangedFrom?: string): PutTreeResult {
    const { sorted, bytes, id } = prepared;
    if (id === unchangedFrom) return { id, written: false };
    let written = false;
    let patch = false;
    if (!this.#reuseTreeSync(id)) {
      const patched = this.#treePatches && unchangedFrom !== undefined ? this.#patchOfSync(sorted, bytes.length, unchangedFrom) : null;
      patch = patched !== null;
      written = this.#placeSync(this.#tmpWriteSync('t', patched ?? bytes), this.treePath(id));
    }
    this.#remember(id, sorted);
    return { id, written, ...(patch ? { patch } : {}) };
  }

  /**
   * The bytes of `sorted` as a patch of the tree stored whole under `prior` (the tree it replaces,
   * kept reachable by the revision being built: its base with it), or null when the patch would
   * be over half of `wholeBytes` (then the tree is stored whole, and later patches build on it).
   */
  async #patchOf(sorted: readonly TreeNode[], wholeBytes: number, prior: string): Promise<Buffer | null> {
    try {
      const priorBase = await this.#storedBase(prior);
      const baseId = priorBase ?? prior;
      // A patch's base is always stored whole; anything else is damage for verify to name.
      if (priorBase !== null && (await this.#storedBase(baseId)) !== null) return null;
      const patch = encodeTreePatch(patchBetween(baseId, await this.readTree(baseId), sorted));
      return patch.length * 2 <= wholeBytes ? patch : null;
    } catch {
      // The basis could not be read as expected: the tree is stored whole, which needs nothing else.
      return null;
    }
  }

  // `#patchOf` without the thread pool.
  #patchOfSync(sorted: readonly TreeNode[], wholeBytes: number, prior: string): Buffer | null {
    try {
      const priorBase = this.#storedBaseSync(prior);
      const baseId = priorBase ?? prior;
      if (priorBase !== null && this.#storedBaseSync(baseId) !== null) return null;
      const patch = encodeTreePatch(patchBetween(baseId, this.readTreeSync(baseId), sorted));
      return patch.length * 2 <= wholeBytes ? patch : null;
    } catch {
      return null;
    }
  }

  // The tree a stored tree is a patch of (null: stored whole), from its file's first bytes.
  async #storedBase(id: string): Promise<string | null> {
    const handle = await open(this.treePath(checkId(id)), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const head = Buffer.alloc(PATCH_HEAD_BYTES);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      return patchBaseOf(head.subarray(0, bytesRead));
    } finally {
      await handle.close();
    }
  }

  // `#storedBase` without the thread pool.
  #storedBaseSync(id: string): string | null {
    const fd = openSync(this.treePath(checkId(id)), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const head = Buffer.alloc(PATCH_HEAD_BYTES);
      return patchBaseOf(head.subarray(0, readSync(fd, head, 0, head.length, 0)));
    } finally {
      closeSync(fd);
    }
  }

  /**
   * `#reuse` of a tree: a patch is reused only with its base, whose times are refreshed too (GC
   * keeps both). A patch whose base is gone, or a file that is not a tree, is written again.
   */
  async #reuseTree(id: string): Promise<boolean> {
    if (!(await this.#reuse(this.treePath(id)))) return false;
    let base: string | null;
    try {
      base = await this.#storedBase(id);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT' || error instanceof TreeFormatError) return false;
      throw classifyStorageError(error, 'reuse object', this.treePath(id));
    }
    return base === null || this.#reuse(this.treePath(base));
  }

  // `#reuseTree` without the thread pool.
  #reuseTreeSync(id: string): boolean {
    if (!this.#reuseSync(this.treePath(id))) return false;
    let base: string | null;
    try {
      base = this.#storedBaseSync(id);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT' || error instanceof TreeFormatError) return false;
      throw classifyStorageError(error, 'reuse object', this.treePath(id));
    }
    return base === null || this.#reuseSync(this.treePath(base));
  }

  /**
   * Stores the content of an open file (`size` bytes, holes kept when `sparse`); returns its id.
   * Reads the source once.
   */
  async putObject(source: FileHandle, size: number, sparse: boolean, signal?: AbortSignal): Promise<StoredObject> {
    // Without a check nothing is ever `moved`.
    return (await this.putObjectIfUnmoved(source, size, sparse, signal)) as StoredObject;
  }

  /**
   * `putObject` of a file that may change while it is read: `unmoved` (a stat of the source
   * against the one taken before the read) is asked every few MB and before the object is
   * placed. When it answers false, nothing is placed, the temporary is removed and the answer is
   * `moved`: a read that mixed two versions never becomes an object, and a large file under a
   * writer is given up at the first check, not after it was copied whole.
   */
  async putObjectIfUnmoved(source: FileHandle, size: number, sparse: boolean, signal?: AbortSignal, unmoved?: () => Promise<boolean>): Promise<StoredObject | 'moved'> {
    if (size <= SMALL_OBJECT_BYTES && !sparse) {
      // Up to a read buffer's size, read into a pooled one: a new Buffer per file is freed only
      // at a GC, and a first persist's thousands of them raised the worker's RSS for nothing.
      const pooled = size <= READ_BUFFER_BYTES ? borrowBuffer() : null;
      const bytes = pooled ? pooled.subarray(0, size) : Buffer.allocUnsafe(size);
      try {
        let read = 0;
        while (read < size) {
          const { bytesRead } = await source.read(bytes, read, size - read, read);
          if (bytesRead === 0) break;
          read += bytesRead;
        }
        if (unmoved && !(await unmoved())) return 'moved';
        return await this.putBytes(bytes.subarray(0, read));
      } finally {
        if (pooled) releaseBuffer(pooled);
      }
    }
    const tmp = await this.#tmpFile('o');
    const copied = await this.#fill(tmp, () => copyFileData(source, tmp.handle, size, sparse, signal, unmoved));
    if (copied.moved) {
      await unlink(tmp.path).catch(() => undefined);
      return 'moved';
    }
    const written = await this.#place(tmp.path, this.objectPath(copied.hash));
    return { id: copied.hash, bytes: copied.bytes, written };
  }

  /** Stores a stream's bytes as an object (hashed while written); returns its id and size. */
  async putStream(source: AsyncIterable<Buffer | Uint8Array>): Promise<StoredObject> {
    const tmp = await this.#tmpFile('o');
    const hash = createHash('sha256');
    let bytes = 0;
    await this.#fill(tmp, async () => {
      for await (const chunk of source) {
        hash.update(chunk);
        await tmp.handle.write(chunk);
        bytes += chunk.length;
      }
    });
    const id = hash.digest('hex');
    return { id, bytes, written: await this.#place(tmp.path, this.objectPath(id)) };
  }

  /**
   * Stores a stream's bytes as an object: up to `IN_MEMORY_BYTES` gathered and stored as bytes by
   * `place` (default `putBytes`; a content the store has already costs no file), anything longer
   * streamed through a temporary.
   */
  async putContent(source: AsyncIterable<Buffer>, place: (bytes: Buffer) => StoredObject | Promise<StoredObject> = (bytes) => this.putBytes(bytes)): Promise<StoredObject> {
    const chunks: Buffer[] = [];
    let size = 0;
    const input = source[Symbol.asyncIterator]();
    for (;;) {
      const next = await input.next();
      if (next.done) return place(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      chunks.push(next.value);
      size += next.value.length;
      if (size > IN_MEMORY_BYTES) break;
    }
    return this.putStream(
      (async function* () {
        yield* chunks;
        for (let next = await input.next(); !next.done; next = await input.next()) yield next.value;
      })(),
    );
  }

  /** Stores bytes as an object. */
  async putBytes(bytes: Buffer): Promise<StoredObject> {
    const id = sha256(bytes);
    if (this.#reusePacked(id) || (await this.#reuse(this.objectPath(id)))) return { id, bytes: bytes.length, written: false };
    const tmp = await this.#tmpFile('o');
    await this.#fill(tmp, () => tmp.handle.writeFile(bytes));
    return { id, bytes: bytes.length, written: await this.#place(tmp.path, this.objectPath(id)) };
  }

  /**
   * `putBytes` without the thread pool: a dozen syscalls on the page cache cost less than the
   * round trips they would take one by one (a persist storing thousands of small files).
   */
  putBytesSync(bytes: Buffer): StoredObject {
    const id = sha256(bytes);
    const target = this.objectPath(id);
    if (this.#reusePacked(id) || this.#reuseSync(target)) return { id, bytes: bytes.length, written: false };
    // Not rechecked before the rename: nothing of this process's event loop runs between the look
    // above and it, so only another writer (the thread pool, another process) could have placed
    // the same bytes meanwhile, and the rename replaces them atomically (a first persist's every
    // file is a new object: the recheck was one more stat of a missing name per file).
    return { id, bytes: bytes.length, written: this.#placeSync(this.#tmpWriteSync('o', bytes), target) };
  }

  /**
   * Reads small object `id` of `size` bytes into `target` at `offset` (room for `size + 1`): from
   * its pack if a pack this process knows holds it, else its own file, else a pack another
   * process wrote since (listed again). `readLoose` reads an object's own file as
   * `readSmallObjectInto` does; an object absent from both fails as its file's open did (ENOENT).
   */
  readSmallInto(id: string, size: number, target: Buffer, offset: number, readLoose: () => void): void {
    const packed = this.packs.find(id);
    if (packed === undefined) {
      try {
        return readLoose();
      } catch (error) {
        return this.#readPacked(id, this.#packedOr(error, id), size, target, offset);
      }
    }
    this.#readPacked(id, packed, size, target, offset);
  }

  #readPacked(id: string, found: Located, size: number, target: Buffer, offset: number, attempt = 1): void {
    const { packId } = found.index;
    const file = packFiles(this.packs.packsDir, packId).pack;
    if (found.slot.length !== size) throw new StorageIoError({ operation: 'restore read', path: file, errno: 'EIO' }, `object ${id} holds ${found.slot.length} bytes in the pack, its tree says ${size}`);
    let reader = this.#packReaders.get(packId);
    if (reader === undefined) {
      try {
        reader = PackReader.open(file);
      } catch (error) {
        return this.#readPacked(id, this.#repackedOr(error, id, found, attempt), size, target, offset, attempt + 1);
      }
      if (this.#packReaders.size >= OPEN_PACKS) {
        const [oldest, open] = this.#packReaders.entries().next().value as [string, PackReader];
        this.#packReaders.delete(oldest);
        open.close();
      }
      this.#packReaders.set(packId, reader);
    }
    reader.readInto(found.slot, target, offset);
  }

  // An object a pack this process knows holds: the pack is refreshed for the GC (false: not packed, or the pack is gone).
  #reusePacked(id: string): boolean {
    const packed = this.packs.find(id);
    return packed !== undefined && this.packs.reuse(packed.index.packId);
  }

  /** Closes the packs this store keeps open for reading. */
  closePacks(): void {
    for (const reader of this.#packReaders.values()) reader.close();
    this.#packReaders.clear();
  }

  #tmpName(kind: 'o' | 't'): string {
    return `${this.#tmpDir}/${storeTempName(kind, this.#tmpPrefix, this.#tmpCount++)}`;
  }

  /**
   * Writes `contents` as one pack, durably: both files fsynced before their renames, then
   * `packs/` (the GC's repack removes the pack they came from only after this returns).
   */
  async writePackDurably(contents: readonly { readonly id: string; readonly bytes: Buffer }[]): Promise<WrittenPack> {
    this.#ensureTmpSync();
    const tmpNames = this.#tmpName('o');
    let written: WrittenPack;
    try {
      written = writePackSync(this.packs.packsDir, tmpNames, contents, OBJECT_MODE, true);
    } catch (error) {
      throw classifyStorageError(error, 'write pack', this.packs.packsDir);
    }
    await fsyncDir(this.packs.packsDir);
    return written;
  }

  /**
   * A writer placing small objects on a thread of its own (object-writer.ts), for a walk that
   * stores many: what `putBytesSync` does, off the walk's thread. The caller closes it.
   */
  objectWriter(onWritten?: (objects: number, bytes: number) => void): ObjectWriter {
    this.#ensureTmpSync();
    const tmpNames = `${this.#tmpDir}/${storeTempPrefix('o', `${this.#tmpPrefix}w${(this.#writers++).toString(36)}`)}`;
    return new ObjectWriter({ objectsDir: this.kindDir('object'), tmpNames, objectMode: OBJECT_MODE, ...(this.#packObjects ? { packs: this.packs } : {}), ...(onWritten ? { onWritten } : {}) });
  }

  #ensureTmpSync(): void {
    if (this.#tmpReady) return;
    try {
      mkdirSync(this.tmpDir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw classifyStorageError(error, 'create archive tmp', this.tmpDir);
    }
    this.#tmpReady = true;
  }

  // A new temporary holding `bytes` (exclusive, never followed), written without the thread pool.
  #tmpWriteSync(kind: 'o' | 't', bytes: Buffer): string {
    this.#ensureTmpSync();
    const tmp = this.#tmpName(kind);
    let fd: number;
    try {
      fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, OBJECT_MODE);
    } catch (error) {
      throw classifyStorageError(error, 'write object', tmp);
    }
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
      closeSync(fd);
    } catch (error) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      try {
        unlinkSync(tmp);
      } catch {
        // gone already
      }
      throw classifyStorageError(error, 'write object', tmp);
    }
    return tmp;
  }

  /**
   * Runs `write` into a temporary file and closes it; on failure the temporary is removed and a
   * filesystem error (a full disk, a read-only remount) comes out typed, naming the temporary.
   */
  async #fill<T>(tmp: { path: string; handle: FileHandle }, write: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await write();
      await tmp.handle.close();
    } catch (error) {
      await tmp.handle.close().catch(() => undefined);
      await unlink(tmp.path).catch(() => undefined);
      throw classifyStorageError(error, 'write object', tmp.path);
    }
    return result;
  }

  // A new temporary file under tmp/ (exclusive, never followed).
  async #tmpFile(kind: 'o' | 't'): Promise<{ path: string; handle: FileHandle }> {
    if (!this.#tmpReady) {
      await mkdir(this.tmpDir, { recursive: true, mode: 0o700 }).catch((e: unknown) => Promise.reject(classifyStorageError(e, 'create archive tmp', this.tmpDir)));
      this.#tmpReady = true;
    }
    const file = this.#tmpName(kind);
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, OBJECT_MODE).catch((e: unknown) =>
      Promise.reject(classifyStorageError(e, 'write object', file)),
    );
    return { path: file, handle };
  }

  /**
   * True when `file` exists; its times are then set to now, so a garbage collection that found it
   * unreachable (and old) leaves it alone for its whole grace period: the persist that reuses it
   * commits well within that time (the dedup-versus-prune race).
   */
  async #reuse(file: string): Promise<boolean> {
    const now = Date.now() / 1000;
    try {
      await utimes(file, now, now);
      return true;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return false;
      throw classifyStorageError(error, 'reuse object', file);
    }
  }

  // `#reuse` without the thread pool. A missing object (a new content: the usual case here) is
  // found without an exception, which costs tens of microseconds a time; one collected between
  // the two calls is missing too.
  #reuseSync(file: string): boolean {
    const now = Date.now() / 1000;
    try {
      if (statSync(file, { throwIfNoEntry: false }) === undefined) return false;
      utimesSync(file, now, now);
      return true;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return false;
      throw classifyStorageError(error, 'reuse object', file);
    }
  }

  // `#place` without the thread pool and without the recheck: its callers looked for the id just
  // before writing, synchronously (see `#place`). True: the temporary is now the object.
  #placeSync(tmp: string, target: string): true {
    const dir = path.dirname(target);
    try {
      if (!this.#fanout.has(dir)) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        this.#fanout.add(dir);
      }
      renameSync(tmp, target);
      return true;
    } catch (error) {
      try {
        unlinkSync(tmp);
      } catch {
        // gone already
      }
      throw classifyStorageError(error, 'store object', target);
    }
  }

  /**
   * Renames a finished temporary to its id; false (and the temporary removed) when the id exists.
   * `recheck: false` when the caller looked for the id just before writing (trees: a walk stores
   * one at a time): a writer that placed the same id meanwhile placed the same bytes, and the
   * rename replaces them atomically. Objects are rechecked: a walk stores many at once, and two
   * names with one content must count as one stored object.
   */
  async #place(tmp: string, target: string, recheck = true): Promise<boolean> {
    const dir = path.dirname(target);
    try {
      if (!this.#fanout.has(dir)) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        this.#fanout.add(dir);
      }
      if (recheck && (await this.#reuse(target))) {
        await unlink(tmp);
        return false;
      }
      await rename(tmp, target);
      return true;
    } catch (error) {
      await unlink(tmp).catch(() => undefined);
      throw classifyStorageError(error, 'store object', target);
    }
  }
}

// A tree from its stored bytes, with its base's bytes when it is a patch (verified against `id`).
function loadedTree(id: string, bytes: Buffer, stored: StoredTree, base: Buffer | null): LoadedTree {
  if (stored.kind === 'whole') {
    if (sha256(bytes) !== id) throw new TreeFormatError(`tree ${id} does not match its content`);
    return { nodes: stored.nodes, base: null };
  }
  const baseId = stored.patch.base;
  const nodes = applyTreePatch(decodeWholeTree(base!, baseId, `tree ${baseId} (the base of ${id})`), stored.patch);
  if (sha256(encodeSortedTree(nodes)) !== id) throw new TreeFormatError(`tree ${id} does not match its content`);
  return { nodes, base: baseId };
}

// A patch's base that could not be read: missing is damage to name, anything else the read's error.
function missingBase(id: string, baseId: string, error: unknown): unknown {
  return errnoOf(error) === 'ENOENT' ? new TreeFormatError(`tree ${id} is a patch of ${baseId}, which is missing`) : error;
}

// Throws unless `id` is a well-formed object id (ids from records and trees are data).
function checkId(id: string): string {
  if (!OBJECT_ID_PATTERN.test(id)) throw new TypeError(`not an object id: ${JSON.stringify(id)}`);
  return id;
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** An object open for reading: what its readers use of a file handle. */
export interface ObjectHandle extends ReadAt {
  close(): Promise<void>;
}

/** An object's slice of a pack, read as if it were a file of its own (positions within the object). */
class PackedObjectHandle implements ObjectHandle {
  #cursor = 0;

  constructor(
    private readonly pack: FileHandle,
    private readonly slot: PackSlot,
    private readonly file: string,
  ) {}

  async read(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ readonly bytesRead: number }> {
    const at = position ?? this.#cursor;
    const want = Math.max(0, Math.min(length, this.slot.length - at));
    if (want === 0) return { bytesRead: 0 };
    const { bytesRead } = await this.pack.read(buffer, offset, want, this.slot.offset + at);
    if (position === null) this.#cursor += bytesRead;
    return { bytesRead };
  }

  /** The whole object; a pack that ends inside it fails typed. */
  async readAll(): Promise<Buffer> {
    const bytes = Buffer.allocUnsafe(this.slot.length);
    for (let at = 0; at < bytes.length; ) {
      const { bytesRead } = await this.read(bytes, at, bytes.length - at, at);
      if (bytesRead === 0) throw new StorageIoError({ operation: 'pack read', path: this.file, errno: 'EIO' }, `the pack ends inside an object of ${this.slot.length} bytes at ${this.slot.offset}`);
      at += bytesRead;
    }
    return bytes;
  }

  close(): Promise<void> {
    return this.pack.close();
  }
}
