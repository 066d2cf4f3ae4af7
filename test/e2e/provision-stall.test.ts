// A provisioner SIGSTOPped past its lock TTL at a random step while another worker provisions
// the same workspace, then resumed: the stale holder's writes are all refused by the fence, and
// once it settles the workspace has exactly one live sandbox, with the restored files.
// The stop point is a state, not a time: the test waits until the job reports the chosen step
// (started, create, restore), freezes the worker's process group and counts the stop only if
// the job is still active then. FLEET_STALL_SEED replays the choice of steps.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/workspace-harness.js';
import { killGroup, startFleet, type Spawned } from '../helpers/processes.js';
import { rng, seedFrom } from '../helpers/rng.js';
import { waitFor } from '../helpers/wait.js';

const ITERATIONS = Number(process.env.FLEET_STALL_ITERATIONS ?? 6);
/** The provision's progress steps, in order, with the percent each reports (provision-workspace.ts); 'started' is the job taken. */
const STOP_STEPS = [['started', 0], ['create', 30], ['restore', 50]] as const;

describe('stalled provisioner', () => {
  it(`${ITERATIONS} SIGSTOPs of the provisioner at a random step: 0 stale writes accepted, 1 sandbox per workspace`, { timeout: 60_000 + ITERATIONS * 4 * 20_000 }, async () => {
    const seed = seedFrom('FLEET_STALL_SEED');
    const random = rng(seed);
    const h = await createHarness({
      FLEET_LOCK_TTL_MS: '600',
      FLEET_LOCK_DURATION_MS: '1000',
      FLEET_STALLED_INTERVAL_MS: '500',
      FLEET_MAX_STALLED_COUNT: '10',
      FLEET_CONCURRENCY: '1',
      FLEET_LOG_LEVEL: 'error',
    });
    const workers: Spawned[] = [startFleet(['worker', '--queues', 'provision'], h.env), startFleet(['worker', '--queues', 'provision'], h.env)];
    await Promise.all(workers.map((w) => w.waitForOutput('serving')));
    const queue = h.services.client.pool.queue('provision');
    let stoppedMidJob = 0;
    const stoppedAt: string[] = [];

    // A provision can finish before the freeze lands (its steps are milliseconds apart); such an
    // iteration is checked all the same, and the loop goes on until ITERATIONS stops landed mid-job.
    let iterations = 0;
    for (let i = 0; stoppedMidJob < ITERATIONS && i < ITERATIONS * 4; i++) {
      iterations += 1;
      const ws = `stall-${i}`;
      // A workspace with an archived revision, whose sandbox died: provisioning restores it (several steps).
      const first = await h.provision(ws);
      await h.write(ws, Object.fromEntries(Array.from({ length: 300 }, (_, f) => [`d/f${f}.txt`, `file ${f} of ${ws}`])));
      await h.persist(ws);
      await h.services.providers.get('local').destroy(first.handle, AbortSignal.timeout(10_000));

      const { jobId } = await h.services.client.provision({ workspaceId: ws });
      const [step, percent] = STOP_STEPS[Math.floor(random() * STOP_STEPS.length)]!;
      const job = await waitFor(`the job to reach ${step}`, async () => {
        const j = await queue.getJob(jobId);
        if (!j?.processedBy) return undefined;
        const reached = Number((j.progress as { percent?: unknown } | null)?.percent ?? 0) >= percent;
        return reached || j.finishedOn !== undefined ? j : undefined;
      }, 30_000, 2);
      const holder = workers.find((w) => job.processedBy?.endsWith(`:${w.child.pid}`));
      expect(holder, `processedBy ${job.processedBy} (seed ${seed})`).toBeDefined();
      killGroup(holder!.child, 'SIGSTOP');
      const stillActive = (await queue.getJob(jobId).then((j) => j?.getState())) === 'active';
      if (stillActive) {
        stoppedMidJob += 1;
        stoppedAt.push(step);
        // Paused well past the lock TTL and the job lock: the other worker takes the job over.
        const other = workers.find((w) => w !== holder)!;
        await waitFor('the other worker to take over or the job to finish', async () => {
          const j = await queue.getJob(jobId);
          const state = await j?.getState();
          return state === 'completed' || (j?.processedBy?.endsWith(`:${other.child.pid}`) ?? false) ? true : undefined;
        }, 30_000);
      }
      killGroup(holder!.child, 'SIGCONT');
      let observed: unknown;
      await waitFor('the workspace to settle on one ready incarnation', async () => {
        const address = await h.services.addresses.get(ws);
        const runtime = await h.services.runtime.get(ws);
        const sandboxes = (await h.services.providers.get('local').list(AbortSignal.timeout(5_000))).filter((s) => s.workspaceId === ws);
        const j = await queue.getJob(jobId);
        observed = { seed, iteration: i, step, address, runtime, sandboxes, job: { state: await j?.getState(), failedReason: j?.failedReason, attempts: j?.attemptsMade, stalled: j?.stalledCounter } };
        return address && runtime?.state === 'ready' && sandboxes.length === 1 && sandboxes[0]!.handle === address.handle ? { address, sandboxes } : undefined;
      }, 30_000).catch((error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(observed)}`);
      });
      await waitFor('the job to complete', async () => ((await queue.getJob(jobId).then((j) => j?.getState())) === 'completed' ? true : undefined), 30_000);
      // Let the resumed holder finish whatever it was doing, then check again.
      await waitFor('the resumed holder to go idle', async () => {
        const counts = await queue.getJobCounts('active', 'waiting');
        return counts.active === 0 && counts.waiting === 0 ? true : undefined;
      }, 30_000);
      const address = (await h.services.addresses.get(ws))!;
      const sandboxes = (await h.services.providers.get('local').list(AbortSignal.timeout(5_000))).filter((s) => s.workspaceId === ws);
      expect(sandboxes.map((s) => s.handle), `iteration ${i} (seed ${seed})`).toEqual([address.handle]);
      expect(address.generation, `iteration ${i} (seed ${seed})`).toBe(await h.services.addresses.generation(ws));
      const marker = await h.services.providerFor(address).readReady(address.handle, AbortSignal.timeout(5_000));
      expect(marker?.generation, `iteration ${i} (seed ${seed})`).toBe(address.generation);
      expect(await readFile(path.join(h.live(ws), 'd', 'f7.txt'), 'utf8'), `iteration ${i} (seed ${seed})`).toBe(`file 7 of ${ws}`);
    }
    expect(stoppedMidJob, `stops that landed mid-job (seed ${seed}, steps ${stoppedAt.join(',')})`).toBe(ITERATIONS);
    for (const w of workers) killGroup(w.child, 'SIGTERM');
    console.log(JSON.stringify({ test: 'provision-stall', seed, iterations, stoppedMidJob, stoppedAt }));
  });
});
