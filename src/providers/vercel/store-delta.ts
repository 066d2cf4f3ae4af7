/**
 * Stores the files of a delta archive (made in the sandbox, so untrusted) straight into the
 * archive's object store: nothing lands in a host directory, so no host path is ever resolved
 * inside a name the sandbox chose.
 *
 * - Entry paths follow the extract rules (`checkRelative`): an absolute path or a `..` refuses
 *   the archive (`UnsafeTarEntryError`).
 * - Only regular files that were asked for are taken, each once; anything else in the archive
 *   (links, devices, directories, files nobody asked for, a second copy) is skipped and counted.
 * - A file is taken only when the sandbox's second look after archiving it saw the very version
 *   the listing named (same size, mode, times, inode) and the archive holds that many bytes:
 *   otherwise it may be torn or newer than its listing, so the revision keeps what it had and
 *   the next persist takes the file again. A content stored and then not taken is an
 *   unreferenced object (the store's GC removes it).
 * - A file whose ctime is not older than the sandbox's clock before the archive was made (by the
 *   racily-clean margin) is taken but not indexed: the next persist fetches it again.
 */
import { keyOf } from '../../archive/prior-index.js';
import type { FetchedFile } from '../../archive/listing-builder.js';
import { sameListed, type ListedEntry } from '../../tree/listing.js';
import type { FetchedFiles, ObjectSink } from '../sandbox-provider.js';
import { settled } from './plan-delta.js';
import { readTar } from './read-tar.js';
import { checkRelative } from './safe-relative.js';
import { UnsafeTarEntryError } from './unsafe-tar-entry-error.js';

export interface StoreDeltaOptions {
  /** The uncompressed archive. */
  readonly source: AsyncIterable<Buffer>;
  /** The files asked for, by key (their listing). */
  readonly wanted: ReadonlyMap<string, ListedEntry>;
  /** The sandbox's second look at them, by key. */
  readonly restat: ReadonlyMap<string, ListedEntry>;
  /** The sandbox's clock just before the archive was made. */
  readonly clockNs: bigint;
  readonly sink: ObjectSink;
  readonly signal: AbortSignal;
}

export async function storeDelta(options: StoreDeltaOptions): Promise<FetchedFiles> {
  const stored = new Map<string, FetchedFile>();
  const seen = new Set<string>();
  let unexpected = 0;
  let unstable = 0;
  for await (const { entry, content } of readTar(options.source)) {
    options.signal.throwIfAborted();
    const checked = checkRelative(entry.pathBytes);
    if (!checked.ok) throw new UnsafeTarEntryError(entry.path, checked.reason);
    const key = keyOf(checked.rel);
    const want = options.wanted.get(key);
    if (entry.type !== 'file' || want === undefined || seen.has(key)) {
      unexpected += 1;
      continue;
    }
    seen.add(key);
    const again = options.restat.get(key);
    if (again === undefined || !sameListed(again, want) || entry.size !== want.size) {
      unstable += 1;
      continue;
    }
    const object = await options.sink(content);
    if (object.bytes !== want.size) {
      unstable += 1;
      continue;
    }
    stored.set(key, { object: object.id, indexable: settled(want.ctimeNs, options.clockNs) });
  }
  return { stored, unstable, unexpected };
}
