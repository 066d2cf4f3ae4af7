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
import { TaskPool } from '../../lib/task-pool.js';
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

/** Files copied from the archive at once (across directories). */
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
  // One pool across directories: a directory of a few files does not hold the next one back.
  const pool = new TaskPool(SEED_CONCURRENCY, signal);
  const closing: Promise<void>[] = [];
  try {
    for (const { parent, entries } of byParent.values()) {
      pool.check();
      const dir = await ownHandle(options.cursor, parent);
      const group: Promise<void>[] = [];
      try {
        for (const { entry, file } of entries) {
          await pool.schedule(group, async () => {
            const copy = await seedFile(options.staging, dir, entry, file, () => Buffer.from(`seed-${tag}-${n++}`));
            if (copy) seeded.set(entry.key, { entry, copy, settled: settled(entry.ctimeNs, options.clockNs) });
          });
        }
      } finally {
        // The directory's handle is closed once its own files are done (never under a running copy).
        closing.push(Promise.all(group).then(() => (dir === options.cursor.root ? undefined : dir.close())));
      }
    }
    await pool.drain();
  } finally {
    await Promise.all(closing);
  }
  const fetch = new Map([...plan.fetch].filter(([key]) => !seeded.has(key)));
  return { plan: { ...plan, fetch }, seeded };
}

// A handle of its own on the directory at `rel` (the cursor's chain moves on while its files are copied).
async function ownHandle(cursor: DirCursor, rel: Buffer): Promise<DirHandle> {
  if (rel.length === 0) return cursor.root;
  const { parent, name } = splitRelative(rel);
  return (await cursor.at(parent)).openDir(name);
}

/**
 * One seeded file: a copy of the object (a reflink where the filesystem has them) made under
 * its own name, exclusively, then its mode and time; the mirror is the fleet's alone, so the new
 * name is reached by nothing else in between. A name already there (a copy left by an update
 * killed halfway) is replaced through the staging directory. Null when the archive cannot give
 * the object (damaged, lost: the file is transferred instead) or the copy is not its size.
 */
async function seedFile(staging: DirHandle, dir: DirHandle, entry: ListedEntry, file: SeedFile, temp: () => Buffer): Promise<WrittenCopy | null> {
  const { name } = splitRelative(entry.rel);
  const time = nodeTime(entry.mtimeNs);
  // The object copied to a new kernel path `made`, with the listed mode and time.
  const copyTo = async (made: Buffer) => {
    await copyFile(file.path, made, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    await chmod(made, fileMode(entry.mode));
    await utimes(made, time, time);
  };
  // An object the archive cannot give: null (the file is transferred); anything else is thrown.
  const lost = (error: unknown) => {
    if (LOST_OBJECT.has(errnoOf(error) ?? '')) return null;
    throw error;
  };
  try {
    await copyTo(dir.entry(name));
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') return lost(error);
    const staged = temp();
    try {
      await copyTo(staging.entry(staged));
    } catch (error) {
      return lost(error);
    }
    await placeStaged(staging, staged, dir, name);
  }
  // One syscall on the inode just written: cheaper here than a thread-pool round trip.
  const stats = dir.lstatSync(name);
  if (!stats.isFile() || Number(stats.size) !== entry.size) {
    await removeEntry(dir, name);
    return null;
  }
  return { ino: stats.ino, ctimeNs: stats.ctimeNs };
}
