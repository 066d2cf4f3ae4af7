/**
 * A lost mirror rebuilt from the archive instead of the sandbox (step 4 of sync-mirror.ts, when
 * the host has no index it can use): a file the sandbox lists with the same size, stored mode and
 * mtime as the seed (the revision the incarnation was restored from) is written from the
 * revision's object, on this host, and not transferred. That is the quick check a local persist
 * makes against its previous revision after a restore; what it cannot see is what that check
 * cannot see either (a same-size rewrite whose mtime was put back before the first persist).
 * From then on the index vouches for the copy with the sandbox's ctime and inode, as for any
 * transferred file.
 *
 * A seeded file enters the index only when its listed ctime is older, by the racily-clean margin,
 * than the sandbox's clock before the listing began: a write in the same tick after the listing
 * would leave its listing unchanged. Others are transferred again next time.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, utimes } from 'node:fs/promises';
import { errnoOf } from '../../errors/classify-storage-error.js';
import { mapBounded } from '../../lib/map-bounded.js';
import type { DirCursor } from '../../tree/dir-cursor.js';
import type { DirHandle } from '../../tree/dir-handle.js';
import { nodeTime, sameMtime } from '../../tree/file-times.js';
import { removeEntry } from '../../tree/remove-tree.js';
import type { SeedFile, TreeSeed } from '../sandbox-provider.js';
import { placeStaged, type WrittenCopy } from './apply-delta.js';
import { fileMode } from './mirror-modes.js';
import type { ListedEntry } from './parse-listing.js';
import { settled, type DeltaPlan } from './plan-delta.js';
import { splitRelative } from './safe-relative.js';

/** Files copied from the archive at once (within one directory). */
const SEED_CONCURRENCY = 16;
/** Errors of an object that is not there to copy (the file is transferred instead). */
const LOST_OBJECT = new Set(['ENOENT', 'EISDIR', 'ELOOP', 'EACCES']);

export interface SeededCopy {
  readonly entry: ListedEntry;
  readonly copy: WrittenCopy;
  /** Old enough to enter the index (see above). */
  readonly settled: boolean;
}

export interface SeedOutcome {
  /** The plan without the seeded files. */
  readonly plan: DeltaPlan;
  readonly seeded: ReadonlyMap<string, SeededCopy>;
}

export interface SeedMirrorOptions {
  readonly cursor: DirCursor;
  readonly staging: DirHandle;
  readonly plan: DeltaPlan;
  /** The sandbox's clock before its listing began. */
  readonly clockNs: bigint;
  readonly seed: TreeSeed;
  readonly signal: AbortSignal;
}

// True when the sandbox lists the seed's version of the file. Its time is the recorded one, or
// either side holds the other's stored form (the archive records a mirror copy's time; a
// restored sandbox file carries the time its restore copy was given).
const matches = (entry: ListedEntry, file: SeedFile | undefined): file is SeedFile =>
  file !== undefined && file.size === entry.size && file.mode === fileMode(entry.mode) && (sameMtime(entry.mtimeNs, file.mtimeNs) || sameMtime(file.mtimeNs, entry.mtimeNs));

export async function seedMirror(options: SeedMirrorOptions): Promise<SeedOutcome> {
  const { plan, signal } = options;
  const files = await options.seed.files(signal);
  // Seeded files grouped by parent directory, each directory opened once.
  const byParent = new Map<string, { parent: Buffer; entries: { entry: ListedEntry; file: SeedFile }[] }>();
  for (const entry of plan.fetch.values()) {
    const file = files.get(entry.key);
    if (!matches(entry, file)) continue;
    const { parent } = splitRelative(entry.rel);
    const key = parent.toString('latin1');
    let group = byParent.get(key);
    if (!group) byParent.set(key, (group = { parent, entries: [] }));
    group.entries.push({ entry, file });
  }
  const tag = randomBytes(4).toString('hex');
  const seeded = new Map<string, SeededCopy>();
  let n = 0;
  for (const { parent, entries } of byParent.values()) {
    signal.throwIfAborted();
    const dir = await options.cursor.at(parent);
    await mapBounded(entries, SEED_CONCURRENCY, async ({ entry, file }) => {
      const temp = Buffer.from(`seed-${tag}-${n++}`);
      // One copy (a reflink where the filesystem has them) into the private staging directory;
      // an object the archive cannot give (damaged, lost) leaves the file to the transfer.
      const staged = options.staging.entry(temp);
      try {
        await copyFile(file.path, staged, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      } catch (error) {
        if (LOST_OBJECT.has(errnoOf(error) ?? '')) return;
        throw error;
      }
      await chmod(staged, fileMode(entry.mode));
      const time = nodeTime(entry.mtimeNs);
      await utimes(staged, time, time);
      const { name } = splitRelative(entry.rel);
      await placeStaged(options.staging, temp, dir, name);
      const stats = await dir.lstat(name);
      if (Number(stats.size) !== entry.size) return removeEntry(dir, name);
      seeded.set(entry.key, { entry, copy: { ino: stats.ino, ctimeNs: stats.ctimeNs }, settled: settled(entry.ctimeNs, options.clockNs) });
    });
  }
  const fetch = new Map([...plan.fetch].filter(([key]) => !seeded.has(key)));
  return { plan: { ...plan, fetch }, seeded };
}
