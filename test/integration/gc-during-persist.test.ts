// The objects GC with a grace of 0 run at every step of a format 2 persist (before and after each
// object and tree the persist stores, at each progress step) never deletes an object or tree
// the committed revision needs; `fleet verify` stays clean and the revision restores.
//
// Why it is safe with no grace at all. The persist's objects and trees are unreachable until its
// record is written, so age decides, and the cutoff is the earlier of `now - grace` and the start
// of the oldest writer in flight (state/store-writers.ts): the persist registers before its
// first write, so
//   - everything it writes is newer than its start: kept;
//   - everything it reuses (a content the store already has) has its mtime refreshed by the store
//     (ObjectStore `#reuse`) when the persist reuses it: newer than its start, kept, even when the
//     revision that reached it is removed meanwhile (here: retention removes it mid-persist);
//   - what it names by reference without touching (unchanged files and directories) is reachable
//     from its basis, the current revision, which it declared as a root.
// With the production grace (more than twice the longest persist deadline) the same refresh keeps
// a reused object when the registry is lost. The two controls below show each half failing:
// undo the refresh (the test puts the old mtime back right after the store refreshed it) and the
// reused object is deleted; run the persist unregistered and its new objects are deleted.
import { readFile, rm, utimes } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ObjectStore } from '../../src/archive/object-store.js';
import { sha256 } from '../../src/archive/tree-object.js';
import { verifyRevisions, type VerifyProblem } from '../../src/archive/verify-revisions.js';
import { GcMarkIncompleteError } from '../../src/errors/gc-mark-incomplete-error.js';
import { runGc } from '../../src/gc/run-gc.js';
import { persistWorkspace, type PersistDeps } from '../../src/persist/persist-workspace.js';
import type { StoreWriters } from '../../src/state/store-writers.js';
import { persistDeps } from '../../src/app/persist-deps.js';
import { backdate, LONG_AGO, objectsGc, reachedBy } from '../helpers/gc-objects.js';
import { runFleet } from '../helpers/processes.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const DUP = 'the same bytes, stored again';

interface Outcome {
  /** The committed revision (null when the persist failed). */
  readonly revision: string | null;
  /** Why the persist failed, if it did. */
  readonly failure: unknown;
  /** Objects and trees the persist wrote itself (not reused). */
  readonly written: Set<string>;
  /** Objects and trees the GC runs removed, in order. */
  readonly removed: string[];
  /** What the committed revision reaches (empty when none was committed). */
  readonly needed: Set<string>;
  readonly gcRuns: number;
  /** GC runs that refused to collect because a committed revision reaches a tree that is gone (GcMarkIncomplete). */
  readonly gcRefused: number;
  readonly problems: VerifyProblem[];
  /** The object only the removed revision reached (it must go). */
  readonly gone: string;
}

// Wraps the store's writes: `step` runs before and after each one, one step at a time; the returned
// function queues a step from elsewhere (a progress report) and resolves once all queued ones ran.
function instrument(store: ObjectStore, step: (label: string, stored?: { id: string; written: boolean }) => Promise<void>): (label?: string) => Promise<void> {
  let tail = Promise.resolve();
  const serial = (label: string, stored?: { id: string; written: boolean }) => (tail = tail.then(() => step(label, stored)));
  const originals = {
    putBytes: store.putBytes.bind(store),
    putBytesSync: store.putBytesSync.bind(store),
    putObject: store.putObject.bind(store),
    putTree: store.putTree.bind(store),
    putPreparedTree: store.putPreparedTree.bind(store),
  };
  Object.assign(store, {
    putBytes: async (...args: Parameters<ObjectStore['putBytes']>) => {
      await serial('before putBytes');
      const out = await originals.putBytes(...args);
      await serial('after putBytes', out);
      return out;
    },
    putObject: async (...args: Parameters<ObjectStore['putObject']>) => {
      await serial('before putObject');
      const out = await originals.putObject(...args);
      await serial('after putObject', out);
      return out;
    },
    putTree: async (...args: Parameters<ObjectStore['putTree']>) => {
      await serial('before putTree');
      const out = await originals.putTree(...args);
      await serial('after putTree', out);
      return out;
    },
    putPreparedTree: async (...args: Parameters<ObjectStore['putPreparedTree']>) => {
      await serial('before putTree');
      const out = await originals.putPreparedTree(...args);
      await serial('after putTree', out);
      return out;
    },
    // Nothing of this process runs inside a synchronous store: its steps run at the persist's next
    // turn of the event loop (a GC in another process could run anywhere; the protocol is the same).
    putBytesSync: (...args: Parameters<ObjectStore['putBytesSync']>) => {
      void serial('before putBytesSync');
      const out = originals.putBytesSync(...args);
      void serial('after putBytesSync', out);
      return out;
    },
  });
  return (label) => (label ? serial(label) : tail);
}

/**
 * A: dup.txt, gone.txt, keep/*, dir/sub/*. B (current): without dup.txt and gone.txt. Everything
 * stored is backdated. C: dup.txt again (its object is reused), new files, one changed file, the
 * rest unchanged; while C runs, retention removes A right after the store reused dup.txt's object,
 * and the objects GC (grace 0) runs at every step.
 */
async function persistUnderGc(options: { undoRefresh?: boolean; unregistered?: boolean } = {}): Promise<{ h: Harness; outcome: Outcome }> {
  const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2', FLEET_KEEP_REVISIONS: '1', FLEET_KEEP_REVISIONS_MIN_AGE_MS: '0' });
  await h.provision('ws');
  const live = h.live('ws');
  const files: Record<string, string> = { 'dup.txt': DUP, 'gone.txt': 'only revision A has this' };
  for (let i = 0; i < 10; i++) files[`keep/k${i}.txt`] = `kept ${i}`;
  for (let i = 0; i < 5; i++) files[`dir/sub/s${i}.txt`] = `sub ${i}`;
  await h.write('ws', files);
  backdate(live);
  await h.persist('ws');
  await rm(path.join(live, 'dup.txt'));
  await rm(path.join(live, 'gone.txt'));
  await h.persist('ws');
  backdate(path.join(h.config.paths.archiveRoot, '.store'));

  await h.write('ws', { 'dup.txt': DUP, 'dir/sub/s0.txt': 'sub 0, changed', ...Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`new/n${i}.txt`, `new ${i}`])) });
  backdate(live);
  const store = h.services.archive.objects;
  const dupId = sha256(Buffer.from(DUP));
  const gone = sha256(Buffer.from('only revision A has this'));
  const removed: string[] = [];
  const written = new Set<string>();
  let gcRuns = 0;
  let gcRefused = 0;
  let retentionRan = false;
  const gc = async () => {
    let result: Awaited<ReturnType<typeof objectsGc>>;
    try {
      result = await objectsGc(h);
    } catch (error) {
      // A revision reaches a tree that is gone: the GC stops, deleting nothing (the control's damage).
      if (!(error instanceof GcMarkIncompleteError)) throw error;
      gcRefused += 1;
      return;
    }
    gcRuns += 1;
    removed.push(...result.items.map((i) => i.id));
  };
  const queue = instrument(store, async (_label, stored) => {
    if (stored?.written) written.add(stored.id);
    if (stored?.id === dupId && !stored.written && !retentionRan) {
      if (options.undoRefresh) await utimes(store.objectPath(dupId), LONG_AGO, LONG_AGO);
      // Retention removes A (the only revision reaching dup.txt's object) while C runs.
      const retention = await runGc(h.services, { kind: 'retention', dryRun: false, limit: 1_000 }, AbortSignal.timeout(30_000));
      expect(retention.count).toBe(1);
      retentionRan = true;
    }
    await gc();
  });
  const address = (await h.services.addresses.get('ws'))!;
  const unregistered: Pick<StoreWriters, 'begin'> = { begin: async () => ({ token: 'none', startedAt: Date.now(), declare: async () => undefined, end: async () => undefined }) };
  const deps: PersistDeps = { ...persistDeps(h.services), ...(options.unregistered ? { storeWriters: unregistered } : {}) };
  // Every progress step (gate, walk ticks, scan, commit, attach, done) runs the GC too.
  const ctx = { ...h.ctx(), progress: (update: { step: string }) => queue(`progress ${update.step}`) };
  let revision: string | null = null;
  let failure: unknown;
  try {
    const result = await persistWorkspace(deps, { workspaceId: 'ws', generation: address.generation, delete: true, force: false, reason: 'turn-end', turnId: null, coveredSeq: 0 }, ctx);
    revision = result.revision;
  } catch (error) {
    failure = error;
  }
  await queue();
  await gc();
  expect(retentionRan).toBe(true);
  const verification = await verifyRevisions({ archive: h.services.archive, history: h.services.checkpoints }, ['ws'], { missingFormat: 2 });
  const needed = revision ? await reachedBy(h, 'ws', revision) : new Set<string>();
  return { h, outcome: { revision, failure, written, removed, needed, gcRuns, gcRefused, problems: verification.problems, gone } };
}

describe('objects GC during a persist', () => {
  it('grace 0 at every step never deletes what the committed revision needs; verify is clean and the revision restores', { timeout: 120_000 }, async () => {
    const { h, outcome } = await persistUnderGc();
    expect(outcome.failure).toBeUndefined();
    expect(outcome.revision).not.toBeNull();
    expect(outcome.gcRuns).toBeGreaterThan(20);
    expect(outcome.gcRefused).toBe(0);
    // The GC was really collecting: what only the removed revision A reached went.
    expect(outcome.removed).toContain(outcome.gone);
    expect(outcome.removed.filter((id) => outcome.needed.has(id))).toEqual([]);
    expect(outcome.problems).toEqual([]);
    const verify = await runFleet(['verify', 'ws'], h.env);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    // Restore from it: a new incarnation gets exactly the tree.
    const address = (await h.services.addresses.get('ws'))!;
    await h.services.providerFor(address).destroy(address.handle, AbortSignal.timeout(30_000));
    expect((await h.provision('ws')).outcome).toBe('restored');
    expect(await readFile(path.join(h.live('ws'), 'dup.txt'), 'utf8')).toBe(DUP);
    expect(await readFile(path.join(h.live('ws'), 'dir/sub/s0.txt'), 'utf8')).toBe('sub 0, changed');
    expect(await readFile(path.join(h.live('ws'), 'keep/k9.txt'), 'utf8')).toBe('kept 9');
    expect(await readFile(path.join(h.live('ws'), 'new/n4.txt'), 'utf8')).toBe('new 4');
  });

  it('control: without the mtime refresh on reuse, the reused object is deleted and verify reports it', { timeout: 120_000 }, async () => {
    const { outcome } = await persistUnderGc({ undoRefresh: true });
    expect(outcome.failure).toBeUndefined();
    const dupId = sha256(Buffer.from(DUP));
    expect(outcome.removed).toContain(dupId);
    expect(outcome.needed.has(dupId)).toBe(true);
    expect(outcome.problems).toContainEqual(expect.objectContaining({ revision: outcome.revision, problem: 'object-missing', object: dupId, path: 'dup.txt' }));
  });

  it('control: a persist that did not register as a store writer loses what it wrote to a grace-0 GC', { timeout: 120_000 }, async () => {
    const { outcome } = await persistUnderGc({ unregistered: true });
    expect(outcome.removed.filter((id) => outcome.written.has(id)).length).toBeGreaterThan(0);
    // What it wrote is collected under it: either the persist fails reading something back, or
    // the revision it commits misses trees or objects: verify names them, and later GC runs
    // refuse to collect anything (a reachable tree is gone).
    if (outcome.revision) {
      expect(outcome.problems.map((p) => p.problem).filter((p) => p === 'object-missing' || p === 'tree-missing').length).toBeGreaterThan(0);
      expect(outcome.gcRefused).toBeGreaterThan(0);
    } else expect(outcome.failure).toBeDefined();
  });
});
