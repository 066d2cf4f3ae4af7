// The sweep survives SIGKILL: a real `fleet worker --queues backfill` process running the sweep
// job is killed at seeded random points (a count of workspaces migrated; frozen first, so the
// job state read is the one the kill lands in) and restarted; the stalled sweep resumes from its
// stored cursor. In the end every workspace is migrated exactly once (one attached backfill revision,
// one migration record) with every byte of its legacy files. FLEET_BACKFILL_KILLS sets the
// number of kills, FLEET_BACKFILL_SEED replays a run.
import { describe, expect, it } from 'vitest';
import { migratedRecords } from '../helpers/bucket-reads.js';
import { decodePath } from '../../src/archive/tree-walk.js';
import { findLitter, removeLitter } from '../../src/gc/collect-litter.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { archivedFiles, diffFiles, rng, writeLegacyWorkspace, type FileMap } from '../helpers/legacy-store.js';
import { randomTree } from '../helpers/random-legacy.js';
import { killGroup, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { archivedMismatches } from '../helpers/archived.js';

const KILLS = Number(process.env.FLEET_BACKFILL_KILLS ?? 3);
const WORKSPACES = 30;

describe('backfill sweep kill test', () => {
  it(`finishes the sweep across ${KILLS} SIGKILLs of the worker, migrating every workspace exactly once`, { timeout: 120_000 + KILLS * 30_000 }, async () => {
    const seed = Number(process.env.FLEET_BACKFILL_SEED ?? Date.now() % 100_000);
    const random = rng(seed);
    const h = await createHarness({ FLEET_LOCK_DURATION_MS: '1000', FLEET_STALLED_INTERVAL_MS: '500', FLEET_MAX_STALLED_COUNT: '50', FLEET_CONCURRENCY: '2' });
    const legacy = new Map<string, FileMap>();
    for (let i = 0; i < WORKSPACES; i++) {
      const ws = `k${String(i).padStart(2, '0')}`;
      const files = randomTree(random, 25);
      legacy.set(ws, files);
      await writeLegacyWorkspace(h.config.paths.legacyRoot, ws, [...files].map(([p, bytes]) => [decodePath(p), bytes] as const));
    }
    const { keys, redis, client } = h.services;
    const queue = client.pool.queue('backfill');
    let worker = startFleet(['worker', '--queues', 'backfill'], h.env);
    await worker.waitForOutput('serving');
    const { jobId } = await client.backfill({ kind: 'sweep', source: 'blob', batch: 4, ratePerSec: 12 });

    // Kill points: distinct migrated counts, in order, short of the end.
    const points = [...new Set(Array.from({ length: KILLS }, () => 1 + Math.floor(random() * (WORKSPACES - 3))))].sort((a, b) => a - b);
    let killedMidSweep = 0;
    for (const point of points) {
      await waitFor(`${point} workspaces migrated`, async () => (Object.keys(await migratedRecords(redis, keys)).length >= point ? true : undefined), 60_000, 5);
      // Frozen first, so the state read is the state the kill lands in.
      killGroup(worker.child, 'SIGSTOP');
      if ((await queue.getJobState(jobId)) === 'active') killedMidSweep += 1;
      killGroup(worker.child, 'SIGKILL');
      await worker.exited;
      worker = startFleet(['worker', '--queues', 'backfill'], h.env);
      await worker.waitForOutput('serving');
    }

    // State first, then the job: a job read before it completes carries no return value.
    const sweep = await waitFor(
      'the sweep to complete',
      async () => ((await queue.getJobState(jobId)) === 'completed' ? queue.getJob(jobId) : undefined),
      90_000,
    );
    // Workspaces the sweep handed to their own jobs (their lock was still held by the killed worker) finish too.
    await waitFor('every workspace migrated', async () => (Object.keys(await migratedRecords(redis, keys)).length === WORKSPACES ? true : undefined), 90_000);
    killGroup(worker.child, 'SIGTERM');
    await worker.exited;

    const result = sweep.returnvalue as { status: string; total: number; position: number; resumes: number };
    const context = `seed ${seed}, kill points ${points.join(',')}, killed mid-sweep ${killedMidSweep}`;
    expect(result, context).toMatchObject({ status: 'completed', total: WORKSPACES, position: WORKSPACES });
    if (killedMidSweep > 0) expect(result.resumes, context).toBeGreaterThanOrEqual(1);
    expect(Object.keys(await migratedRecords(redis, keys)).sort()).toEqual([...legacy.keys()]);
    for (const [ws, files] of legacy) {
      const attached = (await h.services.checkpoints.history(ws)).filter((c) => c.reason === 'backfill' && c.attachedAt !== null);
      expect(attached, `${ws}: exactly one attached backfill revision (${context})`).toHaveLength(1);
      expect(await h.services.archive.current(ws)).toBe(attached[0]!.workspaceRevision);
      expect(diffFiles(files, await archivedFiles(h.services.archive, ws)), `${ws} (${context})`).toEqual([]);
      const revision = attached[0]!.workspaceRevision;
      expect(await archivedMismatches(h.services.archive, ws, revision)).toEqual([]);
    }
    // What the kills left behind is collectable litter, never a current revision.
    const litter = await findLitter(h.services.archive, [...legacy.keys()], 0, 1_000);
    await removeLitter(litter);
    for (const ws of legacy.keys()) expect(await h.services.archive.current(ws)).not.toBeNull();
    console.log(JSON.stringify({ test: 'backfill-sweep-kill', seed, points, killedMidSweep, resumes: result.resumes, litterRemoved: litter.length }));
  });
});
