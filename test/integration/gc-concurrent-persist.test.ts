// The objects GC (grace 0) in a loop of its own while a format 2 persist of a few hundred files
// writes beside it: the runs overlap the persist's stores (every 20th asynchronous store waits for the next
// GC run to finish while the other lanes keep storing, so runs are known to have happened in the
// middle of the persist: waited on, never slept for). Nothing the committed revision reaches is
// removed once the persist stored it, and old garbage is removed.
//
// A garbage object the persist stores again goes one of two ways, and which one is timing: a GC
// run that reaches it before the persist does removes it (it is old and unreachable, and the persist
// has not touched it yet), and the persist then writes it anew; a persist that reaches it first
// refreshes its mtime, and every GC run keeps it. Both keep the revision whole; the test checks
// that the one that happened is consistent. gc-during-persist.test.ts runs the GC at every single
// step instead, which makes the order deterministic, with controls.
import { utimes } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ObjectStore, StoredObject } from '../../src/archive/object-store.js';
import { SYNC_FILE_BYTES } from '../../src/archive/store-builder.js';
import { verifyRevisions } from '../../src/archive/verify-revisions.js';
import type { GcResult } from '../../src/gc/run-gc.js';
import { backdate, LONG_AGO, objectsGc, reachedBy } from '../helpers/gc-objects.js';
import { readTree } from '../helpers/tree.js';
import { readArchivedTree } from '../helpers/archived.js';
import { createHarness } from '../helpers/workspace-harness.js';

const WAIT_EVERY = 20;

// Makes every `every`-th asynchronous write of the store wait for `gate` (the others go on
// meanwhile); counts every write, and hands each small file's result to `stored`. A synchronous
// store (a small file) cannot wait: the GC loop runs between those at the persist's turns of the
// event loop.
function gateWrites(store: ObjectStore, every: number, gate: () => Promise<void>, stored: (result: StoredObject) => void): () => number {
  let calls = 0;
  let waitable = 0;
  for (const name of ['putBytes', 'putObject', 'putTree', 'putPreparedTree'] as const) {
    const original = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
    Object.assign(store, {
      [name]: async (...args: unknown[]) => {
        calls += 1;
        if (++waitable % every === 0) await gate();
        return original(...args);
      },
    });
  }
  const putBytesSync = store.putBytesSync.bind(store);
  Object.assign(store, {
    putBytesSync: (bytes: Buffer) => {
      calls += 1;
      const result = putBytesSync(bytes);
      stored(result);
      return result;
    },
  });
  return () => calls;
}

describe('objects GC beside a persist', () => {
  it('a grace-0 GC loop running concurrently never removes what the committed revision reaches', { timeout: 180_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const files: Record<string, string> = {};
    for (let d = 0; d < 10; d++) for (let i = 0; i < 20; i++) files[`d${d}/f${i}.txt`] = `basis ${d}/${i}`;
    await h.write('ws', files);
    backdate(h.live('ws'));
    await h.persist('ws');
    const store = h.services.archive.objects;
    // Two old unreachable objects: one the next persist stores again (reused, so kept), one nobody needs.
    const reused = (await store.putBytes(Buffer.from('garbage the persist writes again'))).id;
    const garbage = (await store.putBytes(Buffer.from('garbage nobody needs'))).id;
    backdate(path.join(h.config.paths.archiveRoot, '.store'));
    for (const id of [reused, garbage]) await utimes(store.objectPath(id), LONG_AGO, LONG_AGO);

    const changes: Record<string, string> = { 'again.txt': 'garbage the persist writes again' };
    // Changed files past the small-file size (stored through the thread pool, where a write can wait), new ones small.
    for (let d = 0; d < 10; d++) for (let i = 0; i < 10; i++) changes[`d${d}/f${i}.txt`] = `changed ${d}/${i} `.padEnd(SYNC_FILE_BYTES + 1_000, '.');
    for (let d = 0; d < 5; d++) for (let i = 0; i < 20; i++) changes[`new${d}/n${i}.txt`] = `new ${d}/${i}`;
    await h.write('ws', changes);

    const runs: GcResult[] = [];
    let finished: (() => void)[] = [];
    let persisting = true;
    // Runs that finished while a store of the persist was waiting for them: they overlapped the persist.
    let overlapped = 0;
    const loop = (async () => {
      while (persisting) {
        runs.push(await objectsGc(h));
        if (finished.length > 0) overlapped += 1;
        for (const resolve of finished.splice(0)) resolve();
      }
    })();
    const nextRun = () => new Promise<void>((resolve) => finished.push(resolve));
    // How the persist stored the reused content: `written` when it found no object (a GC run took it first).
    const storesOfReused: StoredObject[] = [];
    const writes = gateWrites(store, WAIT_EVERY, nextRun, (stored) => {
      if (stored.id === reused) storesOfReused.push(stored);
    });
    const result = await h.persist('ws').finally(() => {
      persisting = false;
    });
    await loop;
    finished = [];

    expect(writes()).toBeGreaterThan(5 * WAIT_EVERY);
    expect(overlapped).toBeGreaterThan(2);
    const removed = runs.flatMap((r) => r.items.map((i) => i.id));
    expect(removed).toContain(garbage);
    const needed = await reachedBy(h, 'ws', result.revision!);
    expect(needed.has(reused)).toBe(true);
    // The persist stored the content once; it wrote the object anew exactly when a GC run removed it.
    expect(storesOfReused).toHaveLength(1);
    const reusedRemoved = removed.includes(reused);
    expect(storesOfReused[0]!.written).toBe(reusedRemoved);
    if (reusedRemoved) expect(removed.filter((id) => id === reused)).toHaveLength(1);
    // Apart from that object (removed before the persist stored it), nothing the revision reaches went.
    expect(removed.filter((id) => needed.has(id) && id !== reused)).toEqual([]);
    // One more run after the persist changes nothing the revision needs, and verify is clean.
    expect((await objectsGc(h)).items.filter((i) => needed.has(i.id))).toEqual([]);
    const verified = await verifyRevisions({ archive: h.services.archive, history: h.services.checkpoints }, ['ws'], { missingFormat: 2 });
    expect(verified.problems).toEqual([]);
    expect(await readArchivedTree(h.services.archive, 'ws')).toEqual(await readTree(h.live('ws')));
  });
});
