// The kill test: a worker process persisting a changing workspace is SIGKILLed at a uniform
// random moment while the persist is in flight, again and again. After every iteration
// (the stalled job is re-run by a fresh worker): `current` is one complete revision matching
// its manifest, nothing acknowledged is lost, no rsync temp file is reachable from `current`,
// and the litter is removable. FLEET_KILL_ITERATIONS=100 runs the full version.
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findLitter, removeLitter } from '../../src/gc/collect-litter.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { readTree } from '../helpers/tree.js';
import { killGroup, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { rng } from '../helpers/rng.js';
import { archivedMismatches, readArchivedTree } from '../helpers/archived.js';

const ITERATIONS = Number(process.env.FLEET_KILL_ITERATIONS ?? 12);

describe('kill test', () => {
  it(`survives ${ITERATIONS} SIGKILLs of the persisting worker`, { timeout: 60_000 + ITERATIONS * 15_000 }, async () => {
    const seed = Number(process.env.FLEET_KILL_SEED ?? Date.now() % 100_000);
    const random = rng(seed);
    const h = await createHarness({ FLEET_LOCK_DURATION_MS: '1000', FLEET_STALLED_INTERVAL_MS: '500', FLEET_MAX_STALLED_COUNT: '5', FLEET_CONCURRENCY: '1' });
    await h.provision('ws');
    await h.write('ws', Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`src/f${i}.txt`, `v0 ${i}`])));
    await h.write('ws', { 'big.bin': Buffer.alloc(2_000_000, 1) });
    const queue = h.services.client.pool.queue(`persist@${h.config.hostId}`);
    let worker = startFleet(['worker', '--queues', 'persist'], h.env);
    await worker.waitForOutput('serving');
    let killed = 0;
    let acked = 0;
    let lastDurationMs = 150;

    for (let iteration = 1; iteration <= ITERATIONS; iteration++) {
      // Change the workspace: 10 rewritten, 2 deleted, 2 added, the 2 MB file rewritten.
      const files = (await readdir(path.join(h.live('ws'), 'src'))).sort();
      for (let i = 0; i < 10; i++) await writeFile(path.join(h.live('ws'), 'src', files[Math.floor(random() * files.length)]!), `v${iteration} ${i} ${random()}`);
      for (let i = 0; i < 2; i++) await rm(path.join(h.live('ws'), 'src', files[i]!), { force: true });
      await h.write('ws', { [`src/n${iteration}a.txt`]: `new ${iteration}`, [`src/n${iteration}b.txt`]: `new ${iteration}`, 'big.bin': Buffer.alloc(2_000_000, iteration % 250) });
      const expected = await readTree(h.live('ws'));

      const address = (await h.services.addresses.get('ws'))!;
      const { jobId, seq } = await h.services.client.persist({ workspaceId: 'ws', generation: address.generation, delete: true, reason: 'turn-end', turnId: `t${iteration}` });
      await waitFor('the persist to start', async () => {
        const job = await queue.getJob(jobId);
        const state = job ? await job.getState() : 'missing';
        return state === 'active' || state === 'completed' ? state : undefined;
      });
      const killAtMs = random() * lastDurationMs * 1.2;
      await new Promise((resolve) => setTimeout(resolve, killAtMs));
      const statusBefore = await h.services.intents.status('ws');
      if (statusBefore.completedSeq < seq) {
        killGroup(worker.child, 'SIGKILL');
        await worker.exited;
        killed += 1;
        worker = startFleet(['worker', '--queues', 'persist'], h.env);
        await worker.waitForOutput('serving');
      }
      const status = await waitFor('the request to be acknowledged', async () => {
        const s = await h.services.intents.status('ws');
        return s.completedSeq >= seq ? s : undefined;
      }, 60_000);
      acked += 1;
      const result = status.result as { durationMs: number; revision: string };
      if (statusBefore.completedSeq >= seq) lastDurationMs = Math.max(50, result.durationMs);

      // Invariants after the acknowledgement.
      const current = (await h.services.archive.current('ws'))!;
      expect(current, `iteration ${iteration} (seed ${seed})`).toBe(result.revision);
      const manifest = (await h.services.archive.readManifest('ws', current))!;
      expect(await archivedMismatches(h.services.archive, 'ws', current), `torn current at iteration ${iteration} (seed ${seed})`).toEqual([]);
      expect(await readArchivedTree(h.services.archive, 'ws', current), `lost files at iteration ${iteration} (seed ${seed})`).toEqual(expected);
      expect(manifest.entries.some((e) => /(^|\/)\.[^/]+\.[A-Za-z0-9]{6}$/.test(e.p) || e.p.includes('.~tmp~'))).toBe(false);
    }
    killGroup(worker.child, 'SIGTERM');
    await worker.exited;

    expect(acked).toBe(ITERATIONS);
    expect(killed).toBeGreaterThan(ITERATIONS / 3);
    const litter = await findLitter(h.services.archive, ['ws'], 0, 1_000);
    await removeLitter(litter);
    expect(await findLitter(h.services.archive, ['ws'], 0, 1_000)).toEqual([]);
    const current = (await h.services.archive.current('ws'))!;
    expect((await h.services.archive.revisions('ws')).includes(current)).toBe(true);
    console.log(JSON.stringify({ test: 'persist-kill', seed, iterations: ITERATIONS, killed, acked, litterRemoved: litter.length }));
  });
});
