// The writer thread that places small objects for a walk: every object put is at its id once
// drained (read-only, its exact bytes), one already stored is not written again but has its time
// refreshed (the GC's reuse rule), a failure comes back typed and naming the object, and a
// first persist through it builds the same revision as one placing every object itself.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/archive/object-store.js';
import { StoreBuilder } from '../../src/archive/store-builder.js';
import { StorageIoError } from '../../src/errors/storage-io-error.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { UNLIMITED_TREE } from '../../src/tree/tree-limits.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const objectFiles = async (store: ObjectStore) => (await readdir(store.kindDir('object'), { recursive: true }).catch(() => [] as string[])).filter((f) => f.length > 3);

describe('ObjectWriter', () => {
  it('places every object put, once, read-only with its bytes; an id already stored is refreshed, not rewritten', async () => {
    const store = new ObjectStore(await tempDir('writer-store'));
    const old = store.putBytesSync(Buffer.from('stored before'));
    await utimes(store.objectPath(old.id), 1_000, 1_000);
    const counted = { objects: 0, bytes: 0 };
    const writer = store.objectWriter((objects, bytes) => {
      counted.objects += objects;
      counted.bytes += bytes;
    });
    addCleanup(() => writer.close());
    // Its thread cannot have started before the event loop turns: a walk places objects itself until it has.
    expect(writer.online).toBe(false);
    const contents = Array.from({ length: 1_000 }, (_, i) => Buffer.from(`object ${i} `.repeat(1 + (i % 50))));
    for (const bytes of contents) expect(writer.put(bytes).id).toBe(sha(bytes));
    // The same content again, and one the store had: not written by the writer.
    writer.put(contents[7]!);
    writer.put(Buffer.from('stored before'));
    await writer.drain();
    expect(writer.online).toBe(true);
    for (const bytes of [contents[0]!, contents[999]!, contents[500]!]) {
      const file = store.objectPath(sha(bytes));
      expect(await readFile(file)).toEqual(bytes);
      expect((await stat(file)).mode & 0o777).toBe(0o444);
    }
    expect(await objectFiles(store)).toHaveLength(1_001);
    expect(counted).toEqual({ objects: 1_000, bytes: contents.reduce((sum, b) => sum + b.length, 0) });
    expect((await stat(store.objectPath(old.id))).mtimeMs).toBeGreaterThan(1_000_000);
    expect(await readdir(store.tmpDir)).toEqual([]);
  });

  it('reuses the memory of its batches: 20 MB put through it in 2.5 MiB of batches', async () => {
    const store = new ObjectStore(await tempDir('writer-store'));
    const writer = store.objectWriter();
    addCleanup(() => writer.close());
    const ids: string[] = [];
    for (let i = 0; i < 2_500; i++) {
      const bytes = Buffer.alloc(8_000 + i, i % 251);
      bytes.writeUInt32LE(i, 0);
      ids.push(writer.put(bytes).id);
      if (writer.congested) await writer.room();
    }
    await writer.drain();
    expect(await objectFiles(store)).toHaveLength(2_500);
    expect((await readFile(store.objectPath(ids[2_499]!))).readUInt32LE(0)).toBe(2_499);
    // Over 50 batches were sent; at most those in flight and the one being filled were ever made.
    expect(writer.batchMemory).toBeGreaterThan(0);
    expect(writer.batchMemory).toBeLessThanOrEqual(5 * 512 * 1024);
  });

  it('a failure to place an object comes back typed from drain, naming the object, and nothing is left in tmp', async () => {
    const store = new ObjectStore(await tempDir('writer-store'));
    const bytes = Buffer.from('cannot be placed');
    const id = sha(bytes);
    // A file where the object's fan-out directory must be.
    mkdirSync(store.kindDir('object'), { recursive: true });
    writeFileSync(path.join(store.kindDir('object'), id.slice(0, 2)), 'in the way');
    const writer = store.objectWriter();
    addCleanup(() => writer.close());
    writer.put(Buffer.from('placed first'));
    writer.put(bytes);
    const failure = await writer.drain().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StorageIoError);
    expect(failure).toMatchObject({ context: { operation: 'store object', path: store.objectPath(id) } });
    // Later calls fail the same way (the walk stops at the next room()).
    await expect(writer.room()).rejects.toBe(failure);
    expect(await readdir(store.tmpDir)).toEqual([]);
  });

  it('a first persist through the writer thread is the revision of one that places every object itself', async () => {
    const source = await tempDir('writer-src');
    for (let d = 0; d < 20; d++) {
      mkdirSync(path.join(source, `d${d}`));
      for (let i = 0; i < 100; i++) writeFileSync(path.join(source, `d${d}`, `f${i}`), `file ${d}/${i} `.repeat(1 + ((d * i) % 300)));
    }
    writeFileSync(path.join(source, 'large'), Buffer.alloc(200_000, 9));
    const build = async (writerAfter: number) => {
      const store = new ObjectStore(await tempDir('writer-store'));
      const src = await DirHandle.open(source);
      try {
        const builder = new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(60_000), writerAfter });
        const root = await builder.build(src);
        return { root, newObjects: builder.newObjects, storedBytes: builder.storedBytes, files: builder.files, objects: (await objectFiles(store)).map((f) => path.basename(f)).sort() };
      } finally {
        await src.close();
      }
    };
    const inline = await build(Number.POSITIVE_INFINITY);
    const threaded = await build(10);
    expect(threaded).toEqual(inline);
    expect(inline.files).toBe(2_001);
    // Identical contents (d0/* and f0 of every directory repeat) are stored once.
    expect(inline.newObjects).toBe(inline.objects.length);
  });
});
