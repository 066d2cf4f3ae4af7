/**
 * `memory`: peak RSS (VmHWM from /proc/<pid>/status) of a real worker process,
 * `node bin/fleet.js worker`, under two workloads, next to a bare BullMQ worker process:
 *
 * - queue: 20,000 checkpoint ticks through `fleet worker --queues checkpoint` (the real
 *   checkpoint processor; the workspaces are unknown, so each tick is one Redis read), and the
 *   same number of no-op jobs through a bare BullMQ worker process with the same concurrency;
 * - persist: `fleet worker --queues persist` persisting a 10,000-file / ~130 MB workspace: one
 *   full first revision, then turns rewriting 1 % of the files, each through the fleet client.
 *
 * Each fleet workload also runs with `NODE_OPTIONS=--max-semi-space-size=2` (a smaller V8
 * young generation), the tuning candidate for the 150 MB target. rsync runs as a child process
 * and is not part of the worker's RSS.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { createFleetClient } from '../src/producers/fleet-client.js';
import { CHECKPOINT, CheckpointPayload, checkpointJobOptions, parsePayload, queueNameFor } from '../src/queues/index.js';
import { Queue } from 'bullmq';
import { bareConnection } from './lib/bare-connection.js';
import { withBenchEnv, type BenchEnv } from './lib/bench-env.js';
import { ensureBuilt, ROOT } from './lib/build.js';
import { startFleetHarness } from './lib/fleet-harness.js';
import { spawnWatched, type Watched } from './lib/process-memory.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { summarize } from './lib/stats.js';
import { CONTENT_SEED, changeFiles, planTree, writeTree } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';
import { scaled } from './lib/scale.js';

const QUEUE_JOBS = scaled(10_000, 1_000);
const PERSIST_FILES = scaled(10_000, 500);
const PERSIST_BYTES = scaled(130 * 1_000_000, 5_000_000);
const CHUNK = 1_000;
const PERSIST_TURNS = 5;

/** V8 flags of the tuned variant: a 2 MB semi-space instead of Node 20's default (up to 16 MB). */
const TUNED = '--max-semi-space-size=2';

// Starts `fleet worker --queues <queues>` against the bench Redis (with NODE_OPTIONS when given).
function fleetWorker(env: BenchEnv, queues: string, nodeOptions = ''): Promise<Watched> {
  return spawnWatched(process.execPath, [path.join(ROOT, 'bin', 'fleet.js'), 'worker', '--queues', queues], { env: env.fleetEnv({ NODE_OPTIONS: nodeOptions, FLEET_CONCURRENCY: '4' }), cwd: ROOT, ready: 'serving' });
}

// Waits until a queue has nothing waiting or active.
async function drained(queue: Queue, timeoutMs = 10 * 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(counts).every((c) => c === 0)) return;
    if (Date.now() > deadline) throw new Error(`memory bench: queue ${queue.name} not drained: ${JSON.stringify(counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Adds `QUEUE_JOBS` jobs in chunks.
async function addJobs(queue: Queue, job: () => { name: string; data: unknown; opts?: object }): Promise<void> {
  for (let i = 0; i < QUEUE_JOBS; i += CHUNK) await queue.addBulk(Array.from({ length: Math.min(CHUNK, QUEUE_JOBS - i) }, job));
}

export default async function memoryBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 2;
  await ensureBuilt(ctx.log);
  return withBenchEnv('memory', async (env) => {
    const config = env.config({ FLEET_CONCURRENCY: '4' });
    const client = createFleetClient({ config });
    env.releasers.add('client', () => client.close());
    const checkpointQueue = client.pool.queue(queueNameFor(CHECKPOINT, config.hostId));
    const bareQueue = new Queue('bare', { connection: bareConnection(env.redisUrl), prefix: '{bare}' });
    env.releasers.add('bare queue', () => bareQueue.close());

    const samples = { fleet_idle: [] as number[], fleet_queue: [] as number[], tuned_queue: [] as number[], bare_idle: [] as number[], bare_queue: [] as number[] };
    // One fleet worker under the queue workload; returns [idle, peak] MB.
    const fleetQueueRun = async (nodeOptions: string): Promise<[number, number]> => {
      const worker = await fleetWorker(env, 'checkpoint', nodeOptions);
      try {
        const idle = await worker.peakMB();
        let n = 0;
        await addJobs(checkpointQueue, () => ({ name: CHECKPOINT, data: parsePayload('checkpoint payload', CheckpointPayload, { workspaceId: `idle-${n++}`, generation: 1 }), opts: checkpointJobOptions }));
        await drained(checkpointQueue);
        return [idle, await worker.peakMB()];
      } finally {
        await worker.stop();
      }
    };
    for (let repeat = 0; repeat < repeats; repeat++) {
      const runs = [
        async () => {
          const [idle, peak] = await fleetQueueRun('');
          samples.fleet_idle.push(idle);
          samples.fleet_queue.push(peak);
        },
        async () => void samples.tuned_queue.push((await fleetQueueRun(TUNED))[1]),
        async () => {
          const worker = await spawnWatched(process.execPath, [path.join(ROOT, 'bench', 'fixtures', 'bare-worker.mjs'), env.redisUrl, 'bare', '{bare}', String(config.worker.concurrency)], { env: { PATH: process.env.PATH ?? '' }, cwd: ROOT, ready: 'ready' });
          try {
            samples.bare_idle.push(await worker.peakMB());
            await addJobs(bareQueue, () => ({ name: 'noop', data: { workspaceId: 'idle', generation: 1 } }));
            await drained(bareQueue);
            samples.bare_queue.push(await worker.peakMB());
          } finally {
            await worker.stop();
          }
        },
      ];
      for (let i = 0; i < runs.length; i++) await runs[(i + repeat) % runs.length]!();
      ctx.log(
        `repeat ${repeat + 1}: fleet worker peak ${samples.fleet_queue[repeat]!.toFixed(0)} MB (idle ${samples.fleet_idle[repeat]!.toFixed(0)}), ` +
          `tuned ${samples.tuned_queue[repeat]!.toFixed(0)} MB, bare ${samples.bare_queue[repeat]!.toFixed(0)} MB (idle ${samples.bare_idle[repeat]!.toFixed(0)})`,
      );
    }

    // Persist workload: each run persists its own freshly provisioned workspace (a full first revision, then turns).
    const fleet = await startFleetHarness(env);
    const files = planTree({ files: PERSIST_FILES, totalBytes: PERSIST_BYTES });
    // One stream for every run: each run's tree and turns are new bytes, as before.
    const content = rng(CONTENT_SEED);
    const persistIdle: number[] = [];
    const persistPeak: number[] = [];
    const tunedPersistPeak: number[] = [];
    let runs = 0;
    const persistRun = async (nodeOptions: string): Promise<[number, number]> => {
      const workspaceId = `bench-memory-${runs++}`;
      await fleet.provision(workspaceId);
      await writeTree(fleet.live(workspaceId), files, content);
      const worker = await fleetWorker(env, 'persist', nodeOptions);
      try {
        const idle = await worker.peakMB();
        for (let turn = 0; turn <= PERSIST_TURNS; turn++) {
          if (turn > 0) await changeFiles(fleet.live(workspaceId), files, 0.01, turn, content);
          const address = await fleet.services.addresses.get(workspaceId);
          await client.persist({ workspaceId, generation: address!.generation, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 10 * 60_000 });
        }
        return [idle, await worker.peakMB()];
      } finally {
        await worker.stop();
        await rm(path.dirname(fleet.live(workspaceId)), { recursive: true, force: true });
        await rm(fleet.services.archive.paths(workspaceId).dir, { recursive: true, force: true });
      }
    };
    for (let repeat = 0; repeat < repeats; repeat++) {
      const [idle, peak] = await persistRun('');
      persistIdle.push(idle);
      persistPeak.push(peak);
      tunedPersistPeak.push((await persistRun(TUNED))[1]);
      ctx.log(`persist repeat ${repeat + 1}: fleet worker peak ${peak.toFixed(0)} MB (idle ${idle.toFixed(0)}), tuned ${tunedPersistPeak[repeat]!.toFixed(0)} MB`);
    }

    const queuePeak = summarize(samples.fleet_queue, 'MB');
    const persistPeakSummary = summarize(persistPeak, 'MB');
    return {
      params: { queueJobs: QUEUE_JOBS, concurrency: config.worker.concurrency, persistFiles: PERSIST_FILES, persistMB: PERSIST_BYTES / 1e6, persistTurns: PERSIST_TURNS, firstRevisionFull: true, tunedNodeOptions: TUNED, repeats },
      metrics: {
        fleet_worker_peak_rss_queue_mb: queuePeak,
        bare_worker_peak_rss_queue_mb: summarize(samples.bare_queue, 'MB'),
        fleet_worker_peak_rss_persist_mb: persistPeakSummary,
        tuned_fleet_worker_peak_rss_queue_mb: summarize(samples.tuned_queue, 'MB'),
        tuned_fleet_worker_peak_rss_persist_mb: summarize(tunedPersistPeak, 'MB'),
        fleet_worker_idle_rss_mb: summarize([...samples.fleet_idle, ...persistIdle], 'MB'),
        bare_worker_idle_rss_mb: summarize(samples.bare_idle, 'MB'),
      },
      targets: [
        target('fleet worker peak RSS, queue workload (MB, worst repeat)', queuePeak.max, '<', 150),
        target('fleet worker peak RSS, persist workload (MB, worst repeat)', persistPeakSummary.max, '<', 150),
      ],
      notes: [
        'peak = VmHWM of the worker process (rsync children excluded); idle = VmHWM right after the worker reported ready',
        `tuned = the same worker with NODE_OPTIONS=${TUNED}`,
      ],
    };
  });
}
