/**
 * The entries of a delta archive (made in the sandbox, so untrusted) that may be taken, shared by
 * the mirror (apply-delta.ts) and the listed persist (store-delta.ts):
 *
 * - entry paths follow the extract rules (`checkRelative`): an absolute path or a `..` refuses
 *   the archive (`UnsafeTarEntryError`);
 * - only regular files that were asked for are taken, each once; anything else (links, devices,
 *   directories, files nobody asked for, a second copy) is skipped and counted as unexpected;
 * - a file is taken only when the sandbox's second look after archiving it saw the very version
 *   the listing named (same size, mode, times, inode) and the archive says that size: otherwise it
 *   may be torn or newer than its listing (counted unstable; the next persist takes it again);
 * - a file asked for that the archive lacks and the second look does not see as listed (it
 *   vanished or changed after its listing) is counted unstable too: a round that lost it is not
 *   the listed tree.
 */
import { keyOf } from '../../archive/prior-index.js';
import { sameListed, type ListedEntry } from '../../tree/listing.js';
import { readTar } from './read-tar.js';
import { checkRelative } from './safe-relative.js';
import { UnsafeTarEntryError } from './unsafe-tar-entry-error.js';

export interface DeltaCounts {
  /** Archive entries that were not asked for (or not regular files, or repeated). */
  unexpected: number;
  /** Files that changed between the listing and the second look. */
  unstable: number;
}

export interface WantedEntry {
  readonly key: string;
  /** The checked path. */
  readonly rel: Buffer;
  /** Its listing. */
  readonly want: ListedEntry;
  /** Its bytes (to be read before the next entry). */
  readonly content: AsyncIterable<Buffer>;
}

export async function* wantedEntries(
  source: AsyncIterable<Buffer>,
  wanted: ReadonlyMap<string, ListedEntry>,
  restat: ReadonlyMap<string, ListedEntry>,
  counts: DeltaCounts,
  signal: AbortSignal,
): AsyncGenerator<WantedEntry> {
  const seen = new Set<string>();
  for await (const { entry, content } of readTar(source)) {
    signal.throwIfAborted();
    const checked = checkRelative(entry.pathBytes);
    if (!checked.ok) throw new UnsafeTarEntryError(entry.path, checked.reason);
    const key = keyOf(checked.rel);
    const want = wanted.get(key);
    if (entry.type !== 'file' || want === undefined || seen.has(key)) {
      counts.unexpected += 1;
      continue;
    }
    seen.add(key);
    const again = restat.get(key);
    if (again === undefined || !sameListed(again, want) || entry.size !== want.size) {
      counts.unstable += 1;
      continue;
    }
    yield { key, rel: checked.rel, want, content };
  }
  // Asked for and not in the archive: vanished, or changed so that tar could not read it, since
  // its listing (a file the second look still sees as listed was only unreadable: not a change).
  for (const [key, want] of wanted) {
    if (seen.has(key)) continue;
    const again = restat.get(key);
    if (again === undefined || !sameListed(again, want)) counts.unstable += 1;
  }
}
