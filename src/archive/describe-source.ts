/**
 * Lists and describes one directory of a source tree beneath its handle: names (at most what the
 * entry limit leaves), then an lstat (and readlink for symlinks) of each, 16 at a time. Entries
 * that vanish meanwhile are dropped and counted; unreadable ones are refused. `keepAll` says the
 * listing is incomplete (more names than the limit left), so a builder keeps previous entries it
 * lacks.
 */
import type { BigIntStats } from 'node:fs';
import { classifyStorageError, errnoOf } from '../errors/classify-storage-error.js';
import { mapBounded } from '../lib/map-bounded.js';
import type { DirHandle } from '../tree/dir-handle.js';
import { UNREADABLE } from './copy-entry.js';
import { keyOf } from './prior-index.js';
import { childRel, encodePath, vanished } from './tree-walk.js';
import type { WalkTally } from './walk-tally.js';

/** lstat calls of one directory in flight at once. */
const LSTAT_CONCURRENCY = 16;

/** One entry of a source directory. */
export interface LiveItem {
  readonly name: Buffer;
  /** The name's bytes as a latin1 string (sorts bytewise). */
  readonly key: string;
  readonly stats: BigIntStats;
  readonly target?: Buffer;
}

export interface DescribedDirectory {
  readonly items: LiveItem[];
  /** Keys of entries refused as unreadable (their previous state is kept). */
  readonly refused: ReadonlySet<string>;
  readonly keepAll: boolean;
}

export async function describeSource(src: DirHandle, rel: Buffer, tally: WalkTally, maxEntries: number): Promise<DescribedDirectory> {
  const refused = new Set<string>();
  const names = await src.names(Math.max(0, maxEntries - tally.walked)).catch((error: unknown) => {
    if (vanished(error)) return Object.assign([] as Buffer[], { truncated: false });
    throw classifyStorageError(error, 'persist read', encodePath(rel) || '.');
  });
  if (names.truncated) tally.refuse('entries', rel, `directory has more entries than the ${maxEntries}-entry limit leaves; the rest were not read`);
  const items = await mapBounded(names, LSTAT_CONCURRENCY, async (name): Promise<LiveItem | null> => {
    try {
      const stats = await src.lstat(name);
      return { name, key: keyOf(name), stats, ...(stats.isSymbolicLink() ? { target: await src.readlink(name) } : {}) };
    } catch (error) {
      if (vanished(error)) {
        tally.vanished += 1;
        return null;
      }
      if (UNREADABLE.has(errnoOf(error) ?? '')) {
        tally.refuse('unreadable', childRel(rel, name), `cannot be read (${errnoOf(error)})`);
        refused.add(keyOf(name));
        return null;
      }
      throw classifyStorageError(error, 'persist read', encodePath(childRel(rel, name)));
    }
  });
  return { items: items.filter((i): i is LiveItem => i !== null), refused, keepAll: names.truncated === true };
}
