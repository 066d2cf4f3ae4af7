// The files a remote tree sends (a Vercel persist, a base baked from a sandbox) go into the store
// as a local walk's do: the small ones through a writer thread, as packs when the store packs,
// the large ones as files (streamed past the in-memory size). Every object is placed and counted
// once when the fetch returns; a second fetch of the same contents by another process (another
// store on the same root) finds them in the packs and stores nothing.
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/archive/object-store.js';
import { sha256 } from '../../src/archive/tree-object.js';
import { fetchIntoStore } from '../../src/persist/fetch-into-store.js';
import type { FetchedFile } from '../../src/archive/listing-builder.js';
import type { ListedTree } from '../../src/providers/sandbox-provider.js';
import type { ListedEntry } from '../../src/tree/listing.js';
import { tempDir } from '../helpers/fleet-env.js';

// A listing entry of `size` bytes under `key` (only what a fetch reads).
const entry = (key: string, size: number): ListedEntry => ({ rel: Buffer.from(key), key, type: 'file', size, mode: 0o644, mtimeNs: 0n, ctimeNs: 0n, ino: 0n, dev: 0n });

// A remote tree whose fetch sends each wanted file's content in chunks of at most 64 KiB, one file after another (as the tar stream does).
function remoteTree(contents: ReadonlyMap<string, Buffer>): Pick<ListedTree, 'fetch'> {
  return {
    async fetch(wanted, sink) {
      const stored = new Map<string, FetchedFile>();
      for (const want of wanted) {
        const bytes = contents.get(want.key)!;
        const object = await sink(
          (async function* () {
            for (let at = 0; at < bytes.length; at += 65_536) yield bytes.subarray(at, at + 65_536);
            if (bytes.length === 0) yield bytes;
          })(),
        );
        stored.set(want.key, { object: object.id, indexable: true });
      }
      return { stored, unstable: 0, unexpected: 0 };
    },
  };
}

async function looseObjects(store: ObjectStore): Promise<number> {
  let count = 0;
  const dir = store.kindDir('object');
  for (const fanout of await readdir(dir).catch(() => [])) count += (await readdir(`${dir}/${fanout}`)).length;
  return count;
}

describe('fetchIntoStore', () => {
  it('places small contents through the writer thread as packs, large ones as files, each counted once; another store then finds them all', { timeout: 60_000 }, async () => {
    const contents = new Map<string, Buffer>();
    for (let i = 0; i < 2_000; i++) contents.set(`src/f${i}.txt`, Buffer.from(`file ${i} `.repeat(1 + (i % 200))));
    contents.set('copy.txt', contents.get('src/f7.txt')!);
    contents.set('empty', Buffer.alloc(0));
    contents.set('over-a-pack.bin', Buffer.alloc(300_000, 1));
    contents.set('over-the-batch.bin', Buffer.alloc(700_000, 2));
    contents.set('streamed.bin', Buffer.alloc(3_000_000, 3));
    const wanted = [...contents].map(([key, bytes]) => entry(key, bytes.length));
    const distinct = new Map([...contents.values()].map((bytes) => [sha256(bytes), bytes.length]));

    const root = await tempDir('fetch-into-store');
    const store = new ObjectStore(root, { packObjects: true });
    const got = await fetchIntoStore(remoteTree(contents), wanted, store, { signal: AbortSignal.timeout(30_000), writerAfter: 0, writerFirst: true });

    expect(got.stored.size).toBe(contents.size);
    for (const [key, bytes] of contents) expect(got.stored.get(key)?.object).toBe(sha256(bytes));
    expect(got.newObjects).toBe(distinct.size);
    expect(got.storedBytes).toBe([...distinct.values()].reduce((a, b) => a + b, 0));
    // The small ones are in packs; only the three too large for one (and nothing else) are files.
    expect(store.packs.packs).toBeGreaterThan(0);
    expect(await looseObjects(store)).toBe(3);

    // Another process's store on the same root reads every object back and stores none of them again.
    const other = new ObjectStore(root, { packObjects: true });
    for (const [key, bytes] of contents) {
      expect(other.hasObjectSync(sha256(bytes)), key).toBe(true);
      expect((await other.readObject(sha256(bytes))).equals(bytes), key).toBe(true);
    }
    const again = await fetchIntoStore(remoteTree(contents), wanted, other, { signal: AbortSignal.timeout(30_000), writerAfter: 0, writerFirst: true });
    expect(again.newObjects).toBe(0);
    expect(again.storedBytes).toBe(0);
    expect(await looseObjects(other)).toBe(3);
  });

  it('without packs, the same contents become one file each', { timeout: 60_000 }, async () => {
    const contents = new Map<string, Buffer>();
    for (let i = 0; i < 600; i++) contents.set(`f${i}`, Buffer.from(`loose ${i}\n`));
    const store = new ObjectStore(await tempDir('fetch-into-store-loose'));
    const got = await fetchIntoStore(remoteTree(contents), [...contents].map(([key, bytes]) => entry(key, bytes.length)), store, { signal: AbortSignal.timeout(30_000) });
    expect(got.newObjects).toBe(600);
    expect(store.packs.packs).toBe(0);
    expect(await looseObjects(store)).toBe(600);
  });
});
