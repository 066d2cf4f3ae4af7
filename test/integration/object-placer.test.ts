// How a build places its small objects (object-placer.ts): the first `after` itself, then through
// a writer thread; while that thread is still starting, at most EARLY_OBJECTS more itself, after
// which the caller is told to wait (`congested`) until the thread runs. Every object is at its id
// and counted once when drained, whichever way it went.
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { EARLY_OBJECTS, ObjectPlacer } from '../../src/archive/object-placer.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';

const objectFiles = async (store: ObjectStore) => (await readdir(store.kindDir('object'), { recursive: true }).catch(() => [] as string[])).filter((f) => f.length > 3);

describe('ObjectPlacer', () => {
  it('places EARLY_OBJECTS itself while the thread starts, then waits for it; every object is stored and counted once', async () => {
    const store = new ObjectStore(await tempDir('placer-store'), { packObjects: true });
    let counted = 0;
    const placer = new ObjectPlacer(store, { after: 10, onWritten: (objects) => (counted += objects) });
    addCleanup(() => placer.close());
    const contents = Array.from({ length: 2_000 }, (_, i) => Buffer.from(`placed ${i} `.repeat(1 + (i % 40))));
    let placedHere = 0;
    let i = 0;
    // Without a turn of the event loop the thread cannot be seen running: the first `after`, then EARLY_OBJECTS, are placed here.
    while (!placer.congested) {
      expect(i).toBeLessThan(contents.length);
      if (placer.putBytesSync(contents[i++]!).written) placedHere += 1;
    }
    expect(i).toBe(10 + EARLY_OBJECTS);
    expect(placedHere).toBe(i);
    expect(await objectFiles(store)).toHaveLength(i);

    await placer.room();
    expect(placer.congested).toBe(false);
    for (; i < contents.length; i++) {
      if (placer.congested) await placer.room();
      // Through the thread: counted when placed, not here.
      expect(placer.putBytesSync(contents[i]!).written).toBe(false);
    }
    await placer.drain();
    expect(counted).toBe(contents.length - placedHere);
    expect(store.packs.packs).toBeGreaterThan(0);
    expect(await objectFiles(store)).toHaveLength(placedHere);
    for (const bytes of contents) expect((await store.readObject((await store.putBytes(bytes)).id)).equals(bytes)).toBe(true);
  });

  it('places everything itself when fewer than `after` objects come (no thread)', async () => {
    const store = new ObjectStore(await tempDir('placer-few'), { packObjects: true });
    const placer = new ObjectPlacer(store, { onWritten: () => expect.unreachable('no thread') });
    for (let i = 0; i < 100; i++) expect(placer.putBytesSync(Buffer.from(`few ${i}`)).written).toBe(true);
    expect(placer.congested).toBe(false);
    await placer.drain();
    await placer.close();
    expect(await objectFiles(store)).toHaveLength(100);
    expect(store.packs.packs).toBe(0);
  });
});
