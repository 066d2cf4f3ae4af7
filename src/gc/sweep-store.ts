/**
 * The sweep of the objects GC: objects and trees of `.store/` that the mark did not reach and
 * that are older than the cutoff, and their removal.
 *
 * A removal never races a writer that reuses the file: the file is first renamed aside (into
 * `.store/tmp/`, where the litter GC collects a leftover), then its mtime is read again. A
 * writer that reused it before the rename refreshed that mtime (ObjectStore `#reuse`), so it is
 * linked back; a writer that comes after the rename finds no file and writes the content anew.
 * Putting back never replaces what a writer placed meanwhile: that file holds the same content,
 * possibly stored another way (a tree whole instead of as a patch whose base is gone).
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { quarantined, quarantineName } from '../archive/archive-paths.js';
import type { ObjectStore, StoredKind } from '../archive/object-store.js';
import { PackIndex, type PackedObject } from '../archive/pack-index.js';
import { OBJECT_ID_PATTERN, TreeFormatError } from '../archive/tree-object.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import type { InvalidId } from '../providers/id-rules.js';
import { DirHandle } from '../tree/dir-handle.js';
import type { Reachable } from './mark-reachable.js';

export interface StoreCandidate {
  /** `pack`: a pack none of whose objects is reachable, or (`live`) one mostly unreachable, found by its index (the id is the pack's). */
  readonly kind: StoredKind | 'pack';
  readonly id: string;
  /** Bytes it frees: the whole entry's, or a repacked pack's unreachable objects'. */
  readonly bytes: number;
  /** The mtime seen when it was found (a reuse since changes it). */
  readonly mtimeNs: bigint;
  readonly ageMs: number;
  /** A pack file without its index (litter of a writer that died). */
  readonly orphan?: boolean;
  /** A pack to repack (repack-pack.ts): its reachable objects, which go into a new pack first. */
  readonly live?: readonly PackedObject[];
}

/** Counts of one kind of unreachable entry. */
export interface Tally {
  objects: number;
  trees: number;
  /** Whole packs (their objects are counted in `objects`, their bytes with the index in `bytes`). */
  packs: number;
  /** Packs mostly unreachable, to repack (their unreachable objects and those objects' bytes are counted in `objects` and `bytes`). */
  repacks: number;
  bytes: number;
}

export interface SweepPlan {
  /** Unreachable and older than the cutoff, at most `limit`. */
  readonly candidates: StoreCandidate[];
  /** Every unreachable entry older than the cutoff (beyond the batch too). */
  readonly collectable: Tally;
  /** Unreachable entries kept because they are younger than the cutoff (a writer may still need them). */
  readonly young: Tally;
}

export interface SweepOptions {
  /** Only entries whose mtime is before this (epoch ms) may go. */
  readonly cutoffMs: number;
  readonly limit: number;
  readonly now: number;
  readonly signal: AbortSignal;
  /** Reports a name in the store that is not an id in its fan-out directory, or not a file: never removed. */
  readonly skip: (invalid: InvalidId) => void;
}

const FANOUT = /^[0-9a-f]{2}$/;
/** A pack partly reachable is repacked when its unreachable objects hold at least this share of its object bytes. */
export const REPACK_DEAD_SHARE = 0.5;
const PACK_INDEX = /^([0-9a-f]{64})\.idx$/;
const PACK_FILE = /^([0-9a-f]{64})\.pack$/;
const tally = (): Tally => ({ objects: 0, trees: 0, packs: 0, repacks: 0, bytes: 0 });
const count = (t: Tally, kind: StoredKind, bytes: number) => {
  if (kind === 'object') t.objects += 1;
  else t.trees += 1;
  t.bytes += bytes;
};

/** Lists the unreachable entries of the store. Changes nothing. */
export async function findUnreachable(store: ObjectStore, reachable: Reachable, options: SweepOptions): Promise<SweepPlan> {
  const plan: SweepPlan = { candidates: [], collectable: tally(), young: tally() };
  const cutoffNs = BigInt(Math.floor(options.cutoffMs)) * 1_000_000n;
  for (const kind of ['tree', 'object'] as const) {
    const marked = kind === 'object' ? reachable.objects : reachable.trees;
    const top = store.kindDir(kind);
    await withDir(top, async (kindDir) => {
      for (const fanoutName of await kindDir.names()) {
        const fanout = fanoutName.toString('latin1');
        if (!FANOUT.test(fanout)) {
          options.skip({ field: 'path', value: path.join(top, fanout), reason: 'not a fan-out directory of the store (two hex digits)' });
          continue;
        }
        const listed = await withChild(kindDir, fanoutName, async (dir) => {
          for (const entry of await dir.names()) {
            options.signal.throwIfAborted();
            const name = entry.toString('latin1');
            const file = path.join(top, fanout, name);
            if (!OBJECT_ID_PATTERN.test(name) || !name.startsWith(fanout)) {
              options.skip({ field: 'objectId', value: file, reason: `must be a lower-case hex SHA-256 starting with ${fanout}` });
              continue;
            }
            if (marked.has(name)) continue;
            const stats = await dir.lstat(entry).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? null : Promise.reject(error)));
            if (!stats) continue;
            if (!stats.isFile()) {
              options.skip({ field: 'objectId', value: file, reason: 'not a regular file' });
              continue;
            }
            const bytes = Number(stats.size);
            if (stats.mtimeNs >= cutoffNs) {
              count(plan.young, kind, bytes);
              continue;
            }
            count(plan.collectable, kind, bytes);
            if (plan.candidates.length < options.limit) plan.candidates.push({ kind, id: name, bytes, mtimeNs: stats.mtimeNs, ageMs: options.now - Number(stats.mtimeNs / 1_000_000n) });
          }
        });
        if (listed === 'not-a-directory') options.skip({ field: 'path', value: path.join(top, fanout), reason: 'not a directory (a symlink is never followed)' });
      }
    });
  }
  await findUnreachablePacks(store, reachable, options, plan, cutoffNs);
  return plan;
}

/**
 * The packs none of whose objects the mark reached, and those whose unreachable objects hold at
 * least REPACK_DEAD_SHARE of the pack's object bytes (repacked: repack-pack.ts), by their index's
 * mtime (refreshed by every writer that reuses one of its objects). An index that does not decode
 * is reported and left alone.
 */
async function findUnreachablePacks(store: ObjectStore, reachable: Reachable, options: SweepOptions, plan: SweepPlan, cutoffNs: bigint): Promise<void> {
  const top = store.packs.packsDir;
  await withDir(top, async (packs) => {
    const names = await packs.names();
    const listed = new Set(names.map((n) => n.toString('latin1')));
    for (const entry of names) {
      options.signal.throwIfAborted();
      const name = entry.toString('latin1');
      const orphan = PACK_FILE.exec(name)?.[1];
      if (orphan !== undefined && !listed.has(`${orphan}.idx`)) {
        // A pack whose index never came (its writer died between the two renames): no reader can find it.
        const stats = await packs.lstat(entry).catch(() => null);
        if (stats?.isFile() && stats.mtimeNs < cutoffNs) {
          plan.collectable.packs += 1;
          plan.collectable.bytes += Number(stats.size);
          if (plan.candidates.length < options.limit) plan.candidates.push({ kind: 'pack', id: orphan, bytes: Number(stats.size), mtimeNs: stats.mtimeNs, ageMs: options.now - Number(stats.mtimeNs / 1_000_000n), orphan: true });
        }
        continue;
      }
      const packId = PACK_INDEX.exec(name)?.[1];
      if (packId === undefined) continue;
      const stats = await packs.lstat(entry).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? null : Promise.reject(error)));
      if (!stats) continue;
      if (!stats.isFile()) {
        options.skip({ field: 'path', value: path.join(top, name), reason: 'not a regular file' });
        continue;
      }
      let index: PackIndex;
      try {
        index = PackIndex.decode(await readEntry(packs, entry), path.join(top, name), packId);
      } catch (error) {
        if (errnoOf(error) === 'ENOENT') continue;
        if (!(error instanceof TreeFormatError)) throw error;
        options.skip({ field: 'path', value: path.join(top, name), reason: error.message });
        continue;
      }
      const live: PackedObject[] = [];
      let liveBytes = 0;
      let allBytes = 0;
      for (const object of index.objects()) {
        allBytes += object.length;
        if (!reachable.objects.has(object.id)) continue;
        live.push(object);
        liveBytes += object.length;
      }
      if (live.length > 0) {
        const deadBytes = allBytes - liveBytes;
        if (live.length === index.count || deadBytes < allBytes * REPACK_DEAD_SHARE) continue;
        const into = stats.mtimeNs >= cutoffNs ? plan.young : plan.collectable;
        into.repacks += 1;
        into.objects += index.count - live.length;
        into.bytes += deadBytes;
        if (into === plan.collectable && plan.candidates.length < options.limit) plan.candidates.push({ kind: 'pack', id: packId, bytes: deadBytes, mtimeNs: stats.mtimeNs, ageMs: options.now - Number(stats.mtimeNs / 1_000_000n), live });
        continue;
      }
      const packStats = await packs.lstat(Buffer.from(`${packId}.pack`)).catch(() => null);
      const bytes = Number(stats.size) + (packStats?.isFile() ? Number(packStats.size) : 0);
      const into = stats.mtimeNs >= cutoffNs ? plan.young : plan.collectable;
      into.packs += 1;
      into.objects += index.count;
      into.bytes += bytes;
      if (into === plan.collectable && plan.candidates.length < options.limit) plan.candidates.push({ kind: 'pack', id: packId, bytes, mtimeNs: stats.mtimeNs, ageMs: options.now - Number(stats.mtimeNs / 1_000_000n) });
    }
  });
}

/**
 * What became of a candidate: removed, put back (a writer reused it since it was found), already
 * gone, or (a pack to repack) left alone because an object it still needs does not match its id.
 */
export type Removal = 'removed' | 'reused' | 'gone' | 'damaged';

/**
 * Removes one candidate unless a writer reused it since it was found. The id is the caller's to
 * validate first. A pack to repack (`live`) is removed as a whole one: repackPack writes its live
 * objects elsewhere first.
 */
export async function removeUnreachable(store: ObjectStore, candidate: StoreCandidate): Promise<Removal> {
  if (candidate.kind === 'pack') return removeUnreachablePack(store, candidate);
  const name = Buffer.from(candidate.id);
  const aside = Buffer.from(quarantineName(candidate.kind, candidate.id, randomBytes(4).toString('hex')));
  const outcome = await withTmp(store, (tmp) =>
    withDir(store.kindDir(candidate.kind as StoredKind), (kindDir) =>
      withChild(kindDir, Buffer.from(candidate.id.slice(0, 2)), async (fanout): Promise<Removal> => {
        try {
          await fanout.rename(name, tmp, aside);
        } catch (error) {
          if (errnoOf(error) === 'ENOENT') return 'gone';
          throw error;
        }
        const after = await tmp.lstat(aside);
        if (after.mtimeNs !== candidate.mtimeNs) {
          // Reused between the look and the rename: back into place.
          await putBack(tmp, aside, fanout, name);
          return 'reused';
        }
        await tmp.unlink(aside);
        return 'removed';
      }),
    ),
  );
  return outcome === 'not-a-directory' || outcome === undefined ? 'gone' : outcome;
}

/**
 * A pack goes as an object does, by its index: the index is renamed aside and its mtime read
 * again (a writer that reused the pack since refreshed it: linked back); then the index and the
 * pack file are removed. A writer that looks after the rename finds no pack and stores anew.
 */
async function removeUnreachablePack(store: ObjectStore, candidate: StoreCandidate): Promise<Removal> {
  if (candidate.orphan) {
    // Its index never came, so no writer can reuse it: removed unless an index appeared since.
    return (
      (await withDir(store.packs.packsDir, async (packs): Promise<Removal> => {
        if (await packs.lstat(Buffer.from(`${candidate.id}.idx`)).then(() => true, () => false)) return 'reused';
        return packs.unlink(Buffer.from(`${candidate.id}.pack`)).then(
          () => 'removed' as const,
          (error: unknown) => (errnoOf(error) === 'ENOENT' ? ('gone' as const) : Promise.reject(error)),
        );
      })) ?? 'gone'
    );
  }
  const name = Buffer.from(`${candidate.id}.idx`);
  const aside = Buffer.from(quarantineName('pack', candidate.id, randomBytes(4).toString('hex')));
  const outcome = await withTmp(store, (tmp) =>
    withDir(store.packs.packsDir, async (packs): Promise<Removal> => {
      try {
        await packs.rename(name, tmp, aside);
      } catch (error) {
        if (errnoOf(error) === 'ENOENT') return 'gone';
        throw error;
      }
      const after = await tmp.lstat(aside);
      if (after.mtimeNs !== candidate.mtimeNs) {
        await putBack(tmp, aside, packs, name);
        return 'reused';
      }
      await tmp.unlink(aside);
      await packs.unlink(Buffer.from(`${candidate.id}.pack`)).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? undefined : Promise.reject(error)));
      return 'removed';
    }),
  );
  return outcome ?? 'gone';
}

/**
 * Puts back what a GC that died between its rename and its check left in `.store/tmp/` when the
 * mark reaches it and its place is empty; returns how many came back.
 */
export async function recoverQuarantined(store: ObjectStore, reachable: Reachable): Promise<number> {
  let recovered = 0;
  await withDir(store.tmpDir, async (tmp) => {
    for (const entry of await tmp.names()) {
      const held = quarantined(entry.toString('latin1'));
      if (held?.kind === 'pack') {
        if (await recoverPackIndex(store, tmp, entry, held.id, reachable)) recovered += 1;
        continue;
      }
      if (!held || !(held.kind === 'object' ? reachable.objects : reachable.trees).has(held.id)) continue;
      const kind = held.kind;
      await withDir(store.kindDir(kind), async (kindDir) => {
        const fanoutName = Buffer.from(held.id.slice(0, 2));
        await kindDir.mkdir(fanoutName).catch((error: unknown) => (errnoOf(error) === 'EEXIST' ? undefined : Promise.reject(error)));
        await withChild(kindDir, fanoutName, async (fanout) => {
          const name = Buffer.from(held.id);
          if (await fanout.lstat(name).then(() => true, (error: unknown) => (errnoOf(error) === 'ENOENT' ? false : Promise.reject(error)))) return;
          if (await putBack(tmp, entry, fanout, name)) recovered += 1;
        });
      });
    }
  });
  return recovered;
}

// A pack index set aside by a GC that died: back when the mark reaches any of its objects (and its pack is still there).
async function recoverPackIndex(store: ObjectStore, tmp: DirHandle, aside: Buffer, packId: string, reachable: Reachable): Promise<boolean> {
  let index: PackIndex;
  try {
    index = PackIndex.decode(await readEntry(tmp, aside), path.join(store.tmpDir, aside.toString('latin1')), packId);
  } catch (error) {
    if (error instanceof TreeFormatError || errnoOf(error) === 'ENOENT') return false;
    throw error;
  }
  if (![...index.objects()].some((object) => reachable.objects.has(object.id))) return false;
  return (
    (await withDir(store.packs.packsDir, async (packs) => {
      if (!(await packs.lstat(Buffer.from(`${packId}.pack`)).then(() => true, () => false))) return false;
      return putBack(tmp, aside, packs, Buffer.from(`${packId}.idx`));
    })) ?? false
  );
}

/**
 * Links an entry set aside back under its name, unless a writer placed that name meanwhile (its
 * file stays); the aside name goes either way. True when it went back.
 */
async function putBack(tmp: DirHandle, aside: Buffer, fanout: DirHandle, name: Buffer): Promise<boolean> {
  let back = true;
  try {
    await fanout.link(tmp, aside, name);
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') throw error;
    back = false;
  }
  await tmp.unlink(aside);
  return back;
}

// Runs `work` on the directory at `dir` (a path the fleet controls); nothing when it does not exist.
export async function withDir<T>(dir: string, work: (handle: DirHandle) => Promise<T>): Promise<T | undefined> {
  let handle: DirHandle;
  try {
    handle = await DirHandle.open(dir);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return await work(handle);
  } finally {
    await handle.close();
  }
}

// Runs `work` on the child directory `name` of `parent`; `not-a-directory` when it is a symlink or a file, nothing when it is gone.
async function withChild<T>(parent: DirHandle, name: Buffer, work: (handle: DirHandle) => Promise<T>): Promise<T | 'not-a-directory' | undefined> {
  let handle: DirHandle;
  try {
    handle = await parent.openDir(name);
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === 'ENOENT') return undefined;
    if (errno === 'ENOTDIR' || errno === 'ELOOP') return 'not-a-directory';
    throw error;
  }
  try {
    return await work(handle);
  } finally {
    await handle.close();
  }
}

// Runs `work` on the store's `tmp/` (created when missing).
async function withTmp<T>(store: ObjectStore, work: (tmp: DirHandle) => Promise<T>): Promise<T> {
  await mkdir(store.tmpDir, { recursive: true, mode: 0o700 });
  const tmp = await DirHandle.open(store.tmpDir);
  try {
    return await work(tmp);
  } finally {
    await tmp.close();
  }
}

// A file of `dir`, whole (opened without following a symlink); `too-large` past `maxBytes`, unread.
export async function readEntry(dir: DirHandle, name: Buffer): Promise<Buffer>;
export async function readEntry(dir: DirHandle, name: Buffer, maxBytes: number): Promise<Buffer | 'too-large'>;
export async function readEntry(dir: DirHandle, name: Buffer, maxBytes = Infinity): Promise<Buffer | 'too-large'> {
  const handle = await dir.openFile(name, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    if (Number.isFinite(maxBytes) && (await handle.stat()).size > maxBytes) return 'too-large';
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
