// A provisioner SIGSTOPped past its lock TTL at a random step while another worker provisions
// the same workspace, then resumed: the stale holder's writes are all refused by the fence, and
// once it settles the workspace has exactly one live sandbox, with the restored files.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/workspace-harness.js';
import { killGroup, startFleet, type Spawned } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const ITERATIONS = Number(process.env.FLEET_STALL_ITERATIONS ?? 6);

describe('stalled provisioner', () => {
  it(`${ITERATIONS} random SIGSTOPs of the provisioner: 0 stale writes accepted, 1 sandbox per workspace`, { timeout: 60_000 + ITERATIONS * 30_000 }, async () => {
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

    for (let i = 0; i < ITERATIONS; i++) {
      const ws = `stall-${i}`;
      // A workspace with an archived revision, whose sandbox died: provisioning restores it (several steps).
      const first = await h.provision(ws);
      await h.write(ws, Object.fromEntries(Array.from({ length: 300 }, (_, f) => [`d/f${f}.txt`, `file ${f} of ${ws}`])));
      await h.persist(ws);
      await h.services.providers.get('local').destroy(first.handle, AbortSignal.timeout(10_000));

      const { jobId } = await h.services.client.provision({ workspaceId: ws });
      const job = await waitFor('the job to start', async () => {
        const j = await queue.getJob(jobId);
        return j && (await j.getState()) === 'active' && j.processedBy ? j : undefined;
      });
      const holder = workers.find((w) => job.processedBy?.endsWith(`:${w.child.pid}`));
      expect(holder, `processedBy ${job.processedBy}`).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 60));
      killGroup(holder!.child, 'SIGSTOP');
      const stillActive = (await queue.getJob(jobId).then((j) => j?.getState())) === 'active';
      if (stillActive) stoppedMidJob += 1;
      // Paused well past the lock TTL and the job lock: the other worker takes the job over.
      const other = workers.find((w) => w !== holder)!;
      await waitFor('the other worker to take over or the job to finish', async () => {
        const j = await queue.getJob(jobId);
        const state = await j?.getState();
        return state === 'completed' || (j?.processedBy?.endsWith(`:${other.child.pid}`) ?? false) ? true : undefined;
      }, 30_000);
      killGroup(holder!.child, 'SIGCONT');
      let observed: unknown;
      await waitFor('the workspace to settle on one ready incarnation', async () => {
        const address = await h.services.addresses.get(ws);
        const runtime = await h.services.runtime.get(ws);
        const sandboxes = (await h.services.providers.get('local').list(AbortSignal.timeout(5_000))).filter((s) => s.workspaceId === ws);
        const j = await queue.getJob(jobId);
        observed = { iteration: i, address, runtime, sandboxes, job: { state: await j?.getState(), failedReason: j?.failedReason, attempts: j?.attemptsMade, stalled: j?.stalledCounter } };
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
      expect(sandboxes.map((s) => s.handle), `iteration ${i}`).toEqual([address.handle]);
      expect(address.generation).toBe(await h.services.addresses.generation(ws));
      const marker = await h.services.providerFor(address).readReady(address.handle, AbortSignal.timeout(5_000));
      expect(marker?.generation).toBe(address.generation);
      expect(await readFile(path.join(h.live(ws), 'd', 'f7.txt'), 'utf8')).toBe(`file 7 of ${ws}`);
    }
    expect(stoppedMidJob).toBeGreaterThan(0);
    for (const w of workers) killGroup(w.child, 'SIGTERM');
  });
});
