/**
 * The packs of one store (`.store/packs`) as one process knows them: the indexes it has read,
 * found again when other processes add packs.
 *
 * - `find` looks only at what is known (no I/O): a writer that misses an object writes it again,
 *   which costs bytes, never content.
 * - `findOrRefresh` lists `packs/` again on a miss when the directory changed since the last
 *   listing: a reader (a restore, `fleet verify`) must find every object a committed revision
 *   names, and another process may have packed it since.
 * - A listing is trusted only once the directory's mtime is older than `RACY_NS`: the kernel
 *   stamps directories with a coarse clock, so a pack renamed in just after a listing can leave
 *   the mtime the listing saw (git's "racily clean" case). Until then a miss lists again.
 * - A pack found gone (the GC removed or repacked it) is forgotten (`forget`); its objects, if
 *   any are still reachable, are in another pack the next listing finds.
 * - An index that does not decode (damaged or planted) is skipped and remembered in `problems`:
 *   its objects are absent here (a writer stores them again; `fleet verify` names the file).
 *   Names are taken only as `{64 hex}.idx`; nothing is followed (`O_NOFOLLOW`).
 */
import { closeSync, constants, openSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import { packFiles } from './pack-file.js';
import { PackIndex } from './pack-index.js';
import { PackLookup, type Located } from './pack-lookup.js';

/** A listing younger than this (by the directory's mtime) may have missed a pack renamed in at once. */
export const RACY_NS = 2_000_000_000n;
const INDEX_NAME = /^([0-9a-f]{64})\.idx$/;
/** A pack reused again within this long is not refreshed again (the GC's grace is hours). */
const REUSE_REFRESH_MS = 60_000;

export class PackSet {
  readonly #lookup = new PackLookup();
  /** The directory's mtime at the last listing that can be trusted; null: list again on a miss. */
  #listedMtimeNs: bigint | null = null;
  readonly #problems = new Map<string, string>();
  /** When this process last refreshed each pack it reused (ms). */
  readonly #reused = new Map<string, number>();

  constructor(
    readonly packsDir: string,
    private readonly nowNs: () => bigint = () => BigInt(Date.now()) * 1_000_000n,
  ) {}

  /** Indexes that did not decode: file → why. */
  get problems(): ReadonlyMap<string, string> {
    return this.#problems;
  }

  /** Packs known. */
  get packs(): number {
    return this.#lookup.packs;
  }

  /** Where object `id` lies among the packs known, without I/O. */
  find(id: string): Located | undefined {
    return this.#lookup.find(id);
  }

  /**
   * Forgets a pack found gone (the GC removed it, or repacked its live objects into another):
   * the next `findOrRefresh` of its objects lists the packs again.
   */
  forget(packId: string): void {
    this.#lookup.remove(packId);
    this.#listedMtimeNs = null;
  }

  /** `find`, listing the packs again first on a miss if they may have changed. */
  findOrRefresh(id: string): Located | undefined {
    return this.#lookup.find(id) ?? (this.refresh() ? this.#lookup.find(id) : undefined);
  }

  /**
   * A writer reuses an object of pack `packId`: the mtime of the pack's index is set to now (the
   * GC's cutoff applies to it, as to a loose object's), at most once a minute per pack. False when
   * the pack is gone (a GC took it: the writer stores the object again).
   */
  reuse(packId: string): boolean {
    const now = Date.now();
    if (now - (this.#reused.get(packId) ?? -Infinity) < REUSE_REFRESH_MS) return true;
    const { index } = packFiles(this.packsDir, packId);
    try {
      utimesSync(index, now / 1000, now / 1000);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') {
        this.forget(packId);
        return false;
      }
      throw classifyStorageError(error, 'refresh pack', index);
    }
    this.#reused.set(packId, now);
    return true;
  }

  /** A pack this process wrote (its index decoded from the bytes it wrote). */
  add(index: PackIndex): void {
    this.#lookup.add(index);
  }

  /** Lists `packs/` again if it changed since the last trusted listing; true if it was listed. */
  refresh(): boolean {
    let mtimeNs: bigint;
    try {
      mtimeNs = statSync(this.packsDir, { bigint: true }).mtimeNs;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return false;
      throw error;
    }
    if (this.#listedMtimeNs === mtimeNs) return false;
    for (const name of readdirSync(this.packsDir)) {
      const packId = INDEX_NAME.exec(name)?.[1];
      if (packId === undefined || this.#lookup.has(packId) || this.#problems.has(name)) continue;
      const file = `${this.packsDir}/${name}`;
      try {
        this.#lookup.add(PackIndex.decode(readWhole(file), file, packId));
      } catch (error) {
        // Gone since the listing (a GC): nothing to know. Anything else is damage to report.
        if (errnoOf(error) !== 'ENOENT') this.#problems.set(name, (error as Error).message);
      }
    }
    this.#listedMtimeNs = this.nowNs() - mtimeNs >= RACY_NS ? mtimeNs : null;
    return true;
  }
}

// A file's bytes, the file opened without following a symlink.
function readWhole(file: string): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
