// The kill test: a worker process persisting a changing workspace is SIGKILLed while the persist
// is in flight, again and again, at a step chosen at random (gate, link, scan, commit, attach).
// The kill point is a state, not a time: the test waits until the job reports the chosen step,
// freezes the worker's process group (SIGSTOP), and kills it only if the persist is still
// unacknowledged, so every counted kill landed mid-persist. After every iteration
// (the stalled job is re-run by a fresh worker): `current` is one complete revision matching
// its manifest, nothing acknowledged is lost, no rsync temp file is reachable from `current`,
// (each persist stores 300 new small files, through the writer thread in format 2),
// and the litter is removable. FLEET_KILL_ITERATIONS=100 runs the full version.
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findLitter, findStoreLitter, removeLitter } from '../../src/gc/collect-litter.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { readTree } from '../helpers/tree.js';
import { cliJson, killGroup, runFleet, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { rng } from '../helpers/rng.js';
import { archivedMismatches, readArchivedTree } from '../helpers/archived.js';

const ITERATIONS = Number(process.env.FLEET_KILL_ITERATIONS ?? 12);
/** The persist's progress steps, in order, with the percent each reports (persist-workspace.ts). */
const KILL_STEPS = [['gate', 5], ['link', 10], ['scan', 50], ['commit', 70], ['attach', 85]] as const;

describe('kill test', () => {
  it(`survives ${ITERATIONS} SIGKILLs of the persisting worker`, { timeout: 60_000 + ITERATIONS * 4 * 15_000 }, async () => {
    const seed = Number(process.env.FLEET_KILL_SEED ?? Date.now() % 100_000);
    const random = rng(seed);
    const h = await createHarness({ FLEET_LOCK_DURATION_MS: '1000', FLEET_LOCK_TTL_MS: '1000', FLEET_STALLED_INTERVAL_MS: '500', FLEET_MAX_STALLED_COUNT: '5', FLEET_CONCURRENCY: '1' });
    await h.provision('ws');
    await h.write('ws', Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`src/f${i}.txt`, `v0 ${i}`])));
    await h.write('ws', { 'big.bin': Buffer.alloc(2_000_000, 1) });
    const queue = h.services.client.pool.queue(`persist@${h.config.hostId}`);
    let worker = startFleet(['worker', '--queues', 'persist'], h.env);
    await worker.waitForOutput('serving');
    let killed = 0;
    let acked = 0;
    const killedAt: string[] = [];

    // A persist can finish before the freeze lands (the steps are milliseconds apart); such an
    // iteration is acknowledged without a kill, and the loop goes on until ITERATIONS kills landed.
    for (let iteration = 1; killed < ITERATIONS && iteration <= ITERATIONS * 4; iteration++) {
      // Change the workspace: 10 rewritten, 2 deleted, 2 added, the 2 MB file rewritten.
      const files = (await readdir(path.join(h.live('ws'), 'src'))).sort();
      for (let i = 0; i < 10; i++) await writeFile(path.join(h.live('ws'), 'src', files[Math.floor(random() * files.length)]!), `v${iteration} ${i} ${random()}`);
      for (let i = 0; i < 2; i++) await rm(path.join(h.live('ws'), 'src', files[i]!), { force: true });
      await h.write('ws', { [`src/n${iteration}a.txt`]: `new ${iteration}`, [`src/n${iteration}b.txt`]: `new ${iteration}`, 'big.bin': Buffer.alloc(2_000_000, iteration % 250) });
      // And 300 new small files (those of three iterations ago gone, under the shrink guard's
      // share): more than a walk places itself, so the kill may land while the writer thread is
      // placing objects (archive/object-writer.ts).
      await rm(path.join(h.live('ws'), `batch${iteration - 3}`), { recursive: true, force: true });
      await h.write('ws', Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`batch${iteration}/f${i}.txt`, `batch ${iteration} file ${i} ${random()}`])));
      const expected = await readTree(h.live('ws'));

      const address = (await h.services.addresses.get('ws'))!;
      const { jobId, seq } = await h.services.client.persist({ workspaceId: 'ws', generation: address.generation, delete: true, reason: 'turn-end', turnId: `t${iteration}` });
      const [step, percent] = KILL_STEPS[Math.floor(random() * KILL_STEPS.length)]!;
      await waitFor(`the persist to reach ${step}`, async () => {
        const job = await queue.getJob(jobId);
        if (!job) return (await h.services.intents.status('ws')).completedSeq >= seq ? 'completed' : undefined;
        const reached = typeof job.progress === 'object' && job.progress !== null && Number((job.progress as { percent?: unknown }).percent) >= percent;
        return reached || job.finishedOn !== undefined ? 'reached' : undefined;
      }, 30_000, 2);
      killGroup(worker.child, 'SIGSTOP');
      const statusBefore = await h.services.intents.status('ws');
      if (statusBefore.completedSeq < seq) {
        killGroup(worker.child, 'SIGKILL');
        await worker.exited;
        killed += 1;
        killedAt.push(step);
        worker = startFleet(['worker', '--queues', 'persist'], h.env);
        await worker.waitForOutput('serving');
      } else {
        killGroup(worker.child, 'SIGCONT');
      }
      const status = await waitFor('the request to be acknowledged', async () => {
        const s = await h.services.intents.status('ws');
        return s.completedSeq >= seq ? s : undefined;
      }, 60_000);
      acked += 1;
      const result = status.result as { durationMs: number; revision: string };

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

    expect(killed, `kills that landed mid-persist (seed ${seed}, steps ${killedAt.join(',')})`).toBe(ITERATIONS);
    expect(acked).toBeGreaterThanOrEqual(ITERATIONS);
    const litter = [...(await findLitter(h.services.archive, ['ws'], 0, 1_000)), ...(await findStoreLitter(h.services.archive, 0, 100_000))];
    await removeLitter(litter);
    expect(await findLitter(h.services.archive, ['ws'], 0, 1_000)).toEqual([]);
    // Whatever a killed walk or writer thread left in the store's tmp/ is recognised as litter and removed.
    expect(await readdir(h.services.archive.objects.tmpDir).catch(() => [])).toEqual([]);
    const current = (await h.services.archive.current('ws'))!;
    expect((await h.services.archive.revisions('ws')).includes(current)).toBe(true);
    // Every revision the kills left, checked from the front door: each tree and object re-read against its id.
    const verify = await runFleet(['verify', 'ws', '--json'], h.env);
    expect(verify.code, `fleet verify after the kills (seed ${seed}): ${verify.stdout}${verify.stderr}`).toBe(0);
    expect((cliJson(verify.stdout) as { problems: unknown[] }).problems).toEqual([]);
    console.log(JSON.stringify({ test: 'persist-kill', seed, iterations: acked, killed, killedAt, litterRemoved: litter.length }));
  });
});
