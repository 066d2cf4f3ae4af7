/**
 * The first half of bringing a mirror up to date: walk it by directory handles (nothing
 * followed, see `DirHandle`) against a fresh listing of the sandbox, remove every entry the
 * sandbox no longer has or has as another type (by handles, `removeEntry`), and describe what
 * stays. Directories the sandbox could not read (`closed-dir`) are kept whole and not walked; an
 * incomplete listing (`truncated`) removes nothing it does not name.
 */
import type { BigIntStats } from 'node:fs';
import { setImmediate } from 'node:timers/promises';
import { keyOf } from '../../archive/prior-index.js';
import { childRel, typeOf, vanished, type EntryType } from '../../archive/tree-walk.js';
import type { DirHandle } from '../../tree/dir-handle.js';
import { removeEntry } from '../../tree/remove-tree.js';
import type { ListedType, Listing } from './parse-listing.js';

/** An entry of the mirror as it is now. */
export interface MirrorEntry {
  readonly type: EntryType;
  /** Permission bits (`0o7777`). */
  readonly mode: number;
  readonly size: number;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly ino: bigint;
  readonly target?: Buffer;
}

export interface MirrorSurvey {
  /** What stays, by key. */
  readonly entries: ReadonlyMap<string, MirrorEntry>;
  /** Entries removed (the sandbox deleted them, or changed their type). */
  readonly removed: number;
}

/** Entries looked at between two yields to the event loop (timers, lock renewals, aborts). */
const YIELD_EVERY = 512;

const MIRROR_TYPE: Readonly<Record<ListedType, EntryType>> = { file: 'file', dir: 'dir', 'closed-dir': 'dir', symlink: 'symlink', fifo: 'fifo' };

export async function surveyMirror(root: DirHandle, listing: Listing, signal: AbortSignal): Promise<MirrorSurvey> {
  const entries = new Map<string, MirrorEntry>();
  let removed = 0;
  let seen = 0;
  // Listing and lstat without the thread pool, as the persist walk does (describe-source.ts): one
  // syscall on a cached inode costs less than a round trip, and every entry of the mirror is looked at.
  const visit = async (dir: DirHandle, rel: Buffer): Promise<void> => {
    signal.throwIfAborted();
    for (const name of dir.namesSync()) {
      if (++seen % YIELD_EVERY === 0) {
        await setImmediate();
        signal.throwIfAborted();
      }
      let stat: BigIntStats;
      try {
        stat = dir.lstatSync(name);
      } catch (error) {
        if (vanished(error)) continue;
        throw error;
      }
      const childPath = childRel(rel, name);
      const key = keyOf(childPath);
      const listed = listing.entries.get(key);
      if (!listed && listing.truncated) continue;
      if (!listed || MIRROR_TYPE[listed.type] !== typeOf(stat)) {
        await removeEntry(dir, name);
        removed += 1;
        continue;
      }
      entries.set(key, describe(dir, name, stat));
      if (listed.type !== 'dir') continue;
      const sub = await dir.openDir(name);
      try {
        await visit(sub, childPath);
      } finally {
        await sub.close();
      }
    }
  };
  await visit(root, Buffer.alloc(0));
  return { entries, removed };
}

// The facts the update compares (a symlink's target too).
function describe(dir: DirHandle, name: Buffer, stat: BigIntStats): MirrorEntry {
  const entry = { type: typeOf(stat), mode: Number(stat.mode & 0o7777n), size: Number(stat.size), mtimeNs: stat.mtimeNs, ctimeNs: stat.ctimeNs, ino: stat.ino };
  return stat.isSymbolicLink() ? { ...entry, target: dir.readlinkSync(name) } : entry;
}
