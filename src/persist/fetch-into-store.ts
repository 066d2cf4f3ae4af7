/**
 * Fetches a remote tree's listed files into the object store (a Vercel persist, a base baked from
 * a sandbox): the contents arrive one after another, and the small ones are placed as a local
 * walk places them (object-placer.ts): the first few hundred here, the rest by a writer thread,
 * as packs when the store packs. Every object is placed before this returns (the trees that name
 * them are written after).
 */
import type { ListedEntry } from '../tree/listing.js';
import type { FetchedFiles, ListedTree } from '../providers/sandbox-provider.js';
import type { ObjectStore } from '../archive/object-store.js';
import { ObjectPlacer } from '../archive/object-placer.js';

export interface FetchedIntoStore extends FetchedFiles {
  /** Objects the store did not have, and their bytes. */
  readonly newObjects: number;
  readonly storedBytes: number;
}

export interface FetchIntoStoreOptions {
  readonly signal: AbortSignal;
  /** Each file stored (progress). */
  readonly onStored?: () => void;
  /** Small objects placed here before a writer thread takes the rest (default WRITER_AFTER). */
  readonly writerAfter?: number;
  /** Start the writer thread first and wait until it runs (tests: every object after `writerAfter` goes through it). */
  readonly writerFirst?: boolean;
}

export async function fetchIntoStore(tree: Pick<ListedTree, 'fetch'>, wanted: readonly ListedEntry[], store: ObjectStore, options: FetchIntoStoreOptions): Promise<FetchedIntoStore> {
  let newObjects = 0;
  let storedBytes = 0;
  const count = (objects: number, bytes: number) => {
    newObjects += objects;
    storedBytes += bytes;
  };
  // The packs other processes wrote since this store last listed them: their objects are not stored again.
  store.packs.refresh();
  const placer = new ObjectPlacer(store, { ...(options.writerAfter === undefined ? {} : { after: options.writerAfter }), onWritten: count });
  try {
    if (options.writerFirst) await placer.whenOnline();
    const got = await tree.fetch(
      wanted,
      async (content) => {
        // A writer thread behind: wait for it (its failure is the fetch's).
        if (placer.congested) await placer.room();
        const object = await store.putContent(content, (bytes) => placer.putBytesSync(bytes));
        if (object.written) count(1, object.bytes);
        options.onStored?.();
        return object;
      },
      options.signal,
    );
    await placer.drain();
    return { ...got, newObjects, storedBytes };
  } finally {
    await placer.close();
  }
}
