/**
 * Stores the files of a delta archive (made in the sandbox, so untrusted) straight into the
 * archive's object store: nothing lands in a host directory, so no host path is ever resolved
 * inside a name the sandbox chose.
 *
 * - Which entries may be taken is delta-entries.ts (extract rules, asked for, once, the second
 *   look agrees); a file is also refused when the archive holds another number of bytes than
 *   listed. The revision keeps what it had and the next persist takes the file again. A content
 *   stored and then not taken is an unreferenced object (the store's GC removes it).
 * - A file whose ctime is not older than the sandbox's clock before the archive was made (by the
 *   racily-clean margin) is taken but not indexed: the next persist fetches it again.
 */
import type { FetchedFile } from '../../archive/listing-builder.js';
import type { ListedEntry } from '../../tree/listing.js';
import type { FetchedFiles, ObjectSink } from '../sandbox-provider.js';
import { wantedEntries, type DeltaCounts } from './delta-entries.js';
import { settled } from './plan-delta.js';

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
  const counts: DeltaCounts = { unexpected: 0, unstable: 0 };
  for await (const { key, want, content } of wantedEntries(options.source, options.wanted, options.restat, counts, options.signal)) {
    const object = await options.sink(content);
    if (object.bytes !== want.size) {
      counts.unstable += 1;
      continue;
    }
    stored.set(key, { object: object.id, indexable: settled(want.ctimeNs, options.clockNs) });
  }
  return { stored, ...counts };
}
