// The sweep over a legacy blob store: zero files lost or changed across 50 random workspaces
// (odd names, live and archived ones among them), lease gating, and resuming from the cursor
// after the sweep is cancelled mid-way.
import { describe, expect, it } from 'vitest';
import { migratedRecords } from '../helpers/bucket-reads.js';
import { decodePath } from '../../src/archive/tree-walk.js';
import { backfillDeps, sweepDeps } from '../../src/app/backfill-deps.js';
import { backfillWorkspace } from '../../src/backfill/backfill-workspace.js';
import { runSweep, type SweepResult } from '../../src/backfill/run-sweep.js';
import { SweepLease } from '../../src/state/sweep-lease.js';
import { readSweepState } from '../../src/state/sweep-state.js';
import { createHarness, rejectsWith, type Harness } from '../helpers/workspace-harness.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { archivedFiles, diffFiles, filesOf, rng, writeLegacyWorkspace, type FileMap } from '../helpers/legacy-store.js';
import { randomTree } from '../helpers/random-legacy.js';
import { archivedMismatches } from '../helpers/archived.js';

// Expected archive content after a backfill: what the archive had, plus legacy paths it lacked.
function union(archived: FileMap, legacy: FileMap): FileMap {
  const out = new Map(archived);
  for (const [p, bytes] of legacy) if (!out.has(p)) out.set(p, bytes);
  return out;
}

// Checks every workspace's current revision byte by byte and against its manifest.
async function expectArchived(h: Harness, expected: Map<string, FileMap>, context: string): Promise<void> {
  for (const [ws, files] of expected) {
    expect(diffFiles(files, await archivedFiles(h.services.archive, ws)), `${ws} (${context})`).toEqual([]);
    const revision = (await h.services.archive.current(ws))!;
    expect(await archivedMismatches(h.services.archive, ws, revision), ws).toEqual([]);
  }
}

describe('backfill sweep', () => {
  it('loses and changes no file across 50 random workspaces, and a second sweep changes nothing', { timeout: 240_000 }, async () => {
    const seed = Number(process.env.FLEET_BACKFILL_SEED ?? Date.now() % 100_000);
    const random = rng(seed);
    const h = await createHarness();
    const expected = new Map<string, FileMap>();
    const liveExpected = new Map<string, FileMap>();
    const partial = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const ws = `ws-${String(i).padStart(2, '0')}`;
      const legacy = randomTree(random);
      await writeLegacyWorkspace(h.config.paths.legacyRoot, ws, [...legacy].map(([p, bytes]) => [decodePath(p), bytes] as const));
      if (i % 10 === 0) {
        // Live and archived already: some legacy paths are newer in the archive.
        await h.provision(ws);
        const newer = Object.fromEntries([...legacy.keys()].filter((p) => !p.startsWith('b64:')).slice(0, 3).map((p) => [p, `archive version of ${p}`]));
        await h.write(ws, { ...newer, 'only-in-archive.txt': 'mine' });
        await h.persist(ws);
        const archived = await archivedFiles(h.services.archive, ws);
        // A live tree takes only UTF-8 paths (provider writeFiles): other new paths wait in the
        // legacy store and the workspace is not marked migrated (so nothing is lost at reconcile).
        const placeable = new Map([...legacy].filter(([p]) => archived.has(p) || !p.startsWith('b64:')));
        if (placeable.size < legacy.size) partial.add(ws);
        expected.set(ws, union(archived, placeable));
        liveExpected.set(ws, union(await filesOf(h.live(ws)), placeable));
      } else {
        expected.set(ws, legacy);
      }
    }
    // The 255-byte edge of the encoding, with a newline in a segment.
    const edge = new Map([['a/' + 'b'.repeat(100) + '\n/' + 'c'.repeat(145), Buffer.from('edge')]]);
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'ws-edge', [...edge]);
    expected.set('ws-edge', edge);

    await testWorkers(h.config, ['backfill']);
    const first = await h.services.client.backfill({ kind: 'sweep', source: 'blob', batch: 7, ratePerSec: 1_000 }, { wait: true, timeoutMs: 200_000 });
    console.log(JSON.stringify({ test: 'backfill-sweep-50', seed, sweepMs: (first.result as { durationMs: number }).durationMs }));
    expect(first.result, `seed ${seed}`).toMatchObject({ status: 'completed', total: 51, position: 51, migrated: 51 - partial.size, partial: partial.size, failed: 0, resumes: 0 });
    await expectArchived(h, expected, `seed ${seed}`);
    for (const [ws, files] of liveExpected) expect(diffFiles(files, await filesOf(h.live(ws))), `live ${ws} (seed ${seed})`).toEqual([]);
    const migrated = Object.keys(await migratedRecords(h.services.redis, h.services.keys)).sort();
    expect(migrated).toEqual([...expected.keys()].filter((ws) => !partial.has(ws)).sort());

    // Idempotent: nothing recorded, nothing copied, the migration records stay as they are.
    const before = await Promise.all([...expected.keys()].map(async (ws) => [await h.services.checkpoints.history(ws), await h.services.archive.revisions(ws)]));
    const records = await migratedRecords(h.services.redis, h.services.keys);
    const second = await h.services.client.backfill({ kind: 'sweep', source: 'blob', batch: 50, ratePerSec: 1_000 }, { wait: true, timeoutMs: 60_000 });
    expect(second.result).toMatchObject({ status: 'completed', migrated: 0, partial: partial.size, alreadyMigrated: 51 - partial.size, copiedFiles: 0 });
    expect(await Promise.all([...expected.keys()].map(async (ws) => [await h.services.checkpoints.history(ws), await h.services.archive.revisions(ws)]))).toEqual(before);
    expect(await migratedRecords(h.services.redis, h.services.keys)).toEqual(records);

    // The live workspaces' next reconcile keeps every backfilled file.
    for (const ws of liveExpected.keys()) await h.persist(ws, { delete: true });
    await expectArchived(h, new Map([...liveExpected]), `after reconcile, seed ${seed}`);
  });

  it('resumes from the cursor after a cancel, redoing at most the in-flight batch', async () => {
    const h = await createHarness();
    const ids = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    for (const ws of ids) await writeLegacyWorkspace(h.config.paths.legacyRoot, ws, [[`${ws}.txt`, ws]]);
    const deps = backfillDeps(h.services);
    const calls: string[] = [];
    const controller = new AbortController();
    const sweep = sweepDeps(h.services, deps, async (workspaceId, source, signal) => {
      calls.push(workspaceId);
      // Cancel while the third batch is in flight.
      if (calls.length === 11) controller.abort(new Error('cancelled'));
      return backfillWorkspace(deps, { workspaceId, source }, { signal, logger: h.ctx().logger });
    });
    const request = { source: 'blob' as const, batch: 4, ratePerSec: 1_000 };
    const ctx = { ...h.ctx(), signal: controller.signal };
    await expect(runSweep(sweep, request, ctx)).rejects.toThrow();
    const saved = await readSweepState(h.services.redis, h.services.keys, 'blob');
    expect(saved.cursor).toBe('r07');
    expect(saved.stats).toMatchObject({ position: 8, migrated: 8 });

    const firstRun = calls.length;
    const result: SweepResult = await runSweep(sweep, request, h.ctx());
    expect(result).toMatchObject({ status: 'completed', resumedFrom: 'r07', resumes: 1, position: 20, total: 20, failed: 0 });
    // The second run never touched a workspace of a finished batch, and every workspace is migrated once.
    expect(calls.slice(firstRun).every((ws) => ws > 'r07')).toBe(true);
    expect(calls.length).toBeLessThanOrEqual(ids.length + request.batch);
    expect(Object.keys(await migratedRecords(h.services.redis, h.services.keys)).sort()).toEqual(ids);
    for (const ws of ids) expect((await h.services.checkpoints.history(ws)).filter((c) => c.reason === 'backfill' && c.attachedAt !== null)).toHaveLength(1);
    // A completed sweep clears its cursor: the next one starts over.
    expect((await readSweepState(h.services.redis, h.services.keys, 'blob')).cursor).toBeNull();
  });

  it('stops before its deadline after a batch and enqueues its continuation', async () => {
    const h = await createHarness();
    for (const ws of ['d1', 'd2', 'd3']) await writeLegacyWorkspace(h.config.paths.legacyRoot, ws, [['f', ws]]);
    const deps = backfillDeps(h.services);
    const continued: unknown[] = [];
    const sweep = {
      ...sweepDeps(h.services, deps, (workspaceId, source, signal) => backfillWorkspace(deps, { workspaceId, source }, { signal, logger: h.ctx().logger })),
      continueLater: async (request: unknown) => {
        continued.push(request);
      },
    };
    // Too close to the deadline to start a batch: nothing is done, the continuation is enqueued.
    const request = { source: 'blob' as const, batch: 2, ratePerSec: 1_000 };
    expect(await runSweep(sweep, request, { ...h.ctx(), deadlineAt: Date.now() + 1_000 })).toMatchObject({ status: 'continued', position: 0 });
    expect(continued).toEqual([request]);
    expect(Object.keys(await migratedRecords(h.services.redis, h.services.keys)).length).toBe(0);
    // The continuation (here: a run with time) finishes from the start.
    expect(await runSweep(sweep, request, h.ctx())).toMatchObject({ status: 'completed', migrated: 3 });
  });

  it('is lease-gated: a second sweep waits for the holder, gives up after twice the TTL, and a lost lease cannot move the cursor', async () => {
    const h = await createHarness();
    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'l1', [['x', 'x']]);
    const deps = backfillDeps(h.services);
    const sweep = { ...sweepDeps(h.services, deps, (workspaceId, source, signal) => backfillWorkspace(deps, { workspaceId, source }, { signal, logger: h.ctx().logger })), leaseTtlMs: 300 };
    const holder = await SweepLease.acquire(h.services.redis, h.services.keys, 'blob', { ttlMs: 60_000, signal: AbortSignal.timeout(10_000), logger: h.ctx().logger });
    await rejectsWith(runSweep(sweep, { source: 'blob', batch: 10, ratePerSec: 100 }, h.ctx()), 'SweepLease');
    // A sweep of another source is not blocked.
    expect(await runSweep(sweep, { source: 'native', batch: 10, ratePerSec: 100 }, h.ctx())).toMatchObject({ status: 'completed' });

    // The holder loses its lease (it expired and another sweep took it): its writes are refused.
    await h.services.redis.set(h.services.keys.backfillSweepLease('blob'), 'someone-else');
    await rejectsWith(holder.write({ 'blob:cursor': 'zzz' }), 'SweepLease');
    expect(holder.signal.aborted).toBe(true);
    await holder.release();
    expect(await h.services.redis.get(h.services.keys.backfillSweepLease('blob'))).toBe('someone-else');
    expect((await readSweepState(h.services.redis, h.services.keys, 'blob')).cursor).toBeNull();

    // Once that lease expires, a waiting sweep proceeds.
    await h.services.redis.pexpire(h.services.keys.backfillSweepLease('blob'), 200);
    expect(await runSweep({ ...sweep, leaseTtlMs: 1_000 }, { source: 'blob', batch: 10, ratePerSec: 100 }, h.ctx())).toMatchObject({ status: 'completed', migrated: 1 });
  });
});
