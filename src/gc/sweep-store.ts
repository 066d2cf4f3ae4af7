/**
 * The sweep of the objects GC: objects and trees of `.store/` that the mark did not reach and
 * that are older than the cutoff, and their removal.
 *
 * A removal never races a writer that reuses the file: the file is first renamed aside (into
 * `.store/tmp/`, where the litter GC collects a leftover), then its mtime is read again. A
 * writer that reused it before the rename refreshed that mtime (ObjectStore `#reuse`), so it is
 * renamed back; a writer that comes after the rename finds no file and writes the content anew.
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { quarantined, quarantineName } from '../archive/archive-paths.js';
import type { ObjectStore, StoredKind } from '../archive/object-store.js';
import { OBJECT_ID_PATTERN } from '../archive/tree-object.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import type { InvalidId } from '../lib/id-rules.js';
import type { Reachable } from './mark-reachable.js';

export interface StoreCandidate {
  readonly kind: StoredKind;
  readonly id: string;
  readonly bytes: number;
  /** The mtime seen when it was found (a reuse since changes it). */
  readonly mtimeNs: bigint;
  readonly ageMs: number;
}

/** Counts of one kind of unreachable entry. */
export interface Tally {
  objects: number;
  trees: number;
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
const tally = (): Tally => ({ objects: 0, trees: 0, bytes: 0 });
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
    for (const fanout of await namesIn(top)) {
      if (!FANOUT.test(fanout)) {
        options.skip({ field: 'path', value: path.join(top, fanout), reason: 'not a fan-out directory of the store (two hex digits)' });
        continue;
      }
      for (const name of await namesIn(path.join(top, fanout))) {
        options.signal.throwIfAborted();
        const file = path.join(top, fanout, name);
        if (!OBJECT_ID_PATTERN.test(name) || !name.startsWith(fanout)) {
          options.skip({ field: 'objectId', value: file, reason: `must be a lower-case hex SHA-256 starting with ${fanout}` });
          continue;
        }
        if (marked.has(name)) continue;
        const stats = await lstat(file, { bigint: true }).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? null : Promise.reject(error)));
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
    }
  }
  return plan;
}

/** What became of a candidate: removed, put back (a writer reused it since it was found), or already gone. */
export type Removal = 'removed' | 'reused' | 'gone';

/** Removes one candidate unless a writer reused it since it was found. The id is the caller's to validate first. */
export async function removeUnreachable(store: ObjectStore, candidate: StoreCandidate): Promise<Removal> {
  const file = store.pathOf(candidate.kind, candidate.id);
  await mkdir(store.tmpDir, { recursive: true, mode: 0o700 });
  const aside = path.join(store.tmpDir, quarantineName(candidate.kind, candidate.id, randomBytes(4).toString('hex')));
  try {
    await rename(file, aside);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return 'gone';
    throw error;
  }
  const after = await lstat(aside, { bigint: true });
  if (after.mtimeNs !== candidate.mtimeNs) {
    // Reused between the look and the rename: back into place (a copy written meanwhile has the same bytes).
    await rename(aside, file);
    return 'reused';
  }
  await unlink(aside);
  return 'removed';
}

/**
 * Puts back what a GC that died between its rename and its check left in `.store/tmp/` when the
 * mark reaches it and its place is empty; returns how many came back.
 */
export async function recoverQuarantined(store: ObjectStore, reachable: Reachable): Promise<number> {
  let recovered = 0;
  for (const name of await namesIn(store.tmpDir)) {
    const held = quarantined(name);
    if (!held || !(held.kind === 'object' ? reachable.objects : reachable.trees).has(held.id)) continue;
    const file = store.pathOf(held.kind, held.id);
    if (await lstat(file).then(() => true, () => false)) continue;
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await rename(path.join(store.tmpDir, name), file);
    recovered += 1;
  }
  return recovered;
}

// Names in a directory; none when it does not exist.
async function namesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return [];
    throw error;
  }
}
