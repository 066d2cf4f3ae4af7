/**
 * `queue`: producer → worker → completed throughput of a no-op job, the fleet against bare
 * BullMQ on one private Redis.
 *
 * - fleet: payloads validated by the gc queue's schema and added with the gc queue's job options
 *   through the fleet client's queue pool; consumed by `startWorkers` (the fleet's wrapper:
 *   validation, deadline, job logger; a success logs at debug, so nothing per job at the
 *   fleet's default level `info`) with a no-op gc processor, logging into /dev/null.
 * - bare: `Queue.addBulk` + `Worker` with the same concurrency and BullMQ's default job options.
 * - two attribution variants locate a gap: bare BullMQ with the fleet's job options, and the
 *   fleet with logging off.
 *
 * The clock runs from the first add until every job has completed. Variants run interleaved,
 * each on an empty Redis. The fleet side runs the built code (`dist/`, as `fleet worker` does),
 * not `src/` through the benchmark's TypeScript loader.
 */
import { Queue, Worker } from 'bullmq';
import { pino } from 'pino';
import { ensureBuilt, importBuilt } from './lib/build.js';
import { bareConnection } from './lib/bare-connection.js';
import { withBenchEnv, type BenchEnv } from './lib/bench-env.js';
import { interleave } from './lib/interleave.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { pairedRatios, summarize } from './lib/stats.js';
import type { Job, JobsOptions } from 'bullmq';
import type { Config } from '../src/config.js';
import { scaled } from './lib/scale.js';

const JOBS = scaled(5_000, 1_000);
// addBulk chunk: large enough to amortise round trips, small enough to overlap with the workers.
const CHUNK = 500;
const POLL_MS = 5;

// Polls until `processed()` reached `jobs` and nothing is waiting or active.
async function drained(queue: Queue, jobs: number, processed: () => number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (processed() >= jobs) {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).every((c) => c === 0)) return;
    }
    if (Date.now() > deadline) throw new Error(`queue bench: only ${processed()} of ${jobs} jobs done after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** One run: throughput, and CPU per job of this process (producer + worker) and of Redis. */
interface RunResult {
  readonly jobsPerS: number;
  readonly nodeCpuUsPerJob: number;
  readonly redisCpuUsPerJob: number;
}

// Times `work` (adding and draining JOBS jobs) with wall clock and CPU counters.
async function measure(env: BenchEnv, work: () => Promise<void>): Promise<RunResult> {
  const redisBefore = await env.redisCpuMs();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const redisMs = (await env.redisCpuMs()) - redisBefore;
  return { jobsPerS: JOBS / (wallMs / 1000), nodeCpuUsPerJob: (cpu.user + cpu.system) / JOBS, redisCpuUsPerJob: (redisMs * 1000) / JOBS };
}

// The fleet's modules the benchmark drives, loaded from `dist/`.
interface Fleet {
  readonly createFleetClient: (typeof import('../src/producers/fleet-client.js'))['createFleetClient'];
  readonly createLogger: (typeof import('../src/logger.js'))['createLogger'];
  readonly closeRedis: (typeof import('../src/redis.js'))['closeRedis'];
  readonly createRedis: (typeof import('../src/redis.js'))['createRedis'];
  readonly queues: typeof import('../src/queues/index.js');
  readonly startWorkers: (typeof import('../src/workers/run-workers.js'))['startWorkers'];
  readonly wrapProcessor: (typeof import('../src/workers/wrap-processor.js'))['wrapProcessor'];
  readonly JobCancellation: (typeof import('../src/workers/job-cancellation.js'))['JobCancellation'];
}

async function loadFleet(): Promise<Fleet> {
  const [client, logger, redis, queues, workers, wrap, cancellation] = await Promise.all([
    importBuilt<typeof import('../src/producers/fleet-client.js')>('producers/fleet-client.js'),
    importBuilt<typeof import('../src/logger.js')>('logger.js'),
    importBuilt<typeof import('../src/redis.js')>('redis.js'),
    importBuilt<typeof import('../src/queues/index.js')>('queues/index.js'),
    importBuilt<typeof import('../src/workers/run-workers.js')>('workers/run-workers.js'),
    importBuilt<typeof import('../src/workers/wrap-processor.js')>('workers/wrap-processor.js'),
    importBuilt<typeof import('../src/workers/job-cancellation.js')>('workers/job-cancellation.js'),
  ]);
  return {
    createFleetClient: client.createFleetClient,
    createLogger: logger.createLogger,
    closeRedis: redis.closeRedis,
    createRedis: redis.createRedis,
    queues,
    startWorkers: workers.startWorkers,
    wrapProcessor: wrap.wrapProcessor,
    JobCancellation: cancellation.JobCancellation,
  };
}

// The fleet path: fleet producer plumbing + startWorkers.
async function runFleet(fleet: Fleet, env: BenchEnv, config: Config, logLevel: string): Promise<RunResult> {
  const { createFleetClient, createLogger, closeRedis, createRedis, startWorkers } = fleet;
  const { GC, GcPayload, gcJobOptions, parsePayload, queueNameFor } = fleet.queues;
  await env.flush();
  const connection = createRedis({ url: config.redis.url!, role: 'worker', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'bench-fleet-worker' });
  await connection.connect();
  const logger = createLogger({ level: logLevel, destination: pino.destination({ dest: '/dev/null', sync: true }) });
  let processed = 0;
  const workers = await startWorkers({
    config,
    queues: [GC],
    processors: { gc: async () => void (processed += 1) },
    connection,
    logger,
  });
  const client = createFleetClient({ config });
  try {
    const queue = client.pool.queue(queueNameFor(GC, config.hostId));
    await queue.waitUntilReady();
    return await measure(env, async () => {
      for (let i = 0; i < JOBS; i += CHUNK) {
        const jobs = [];
        for (let j = i; j < Math.min(JOBS, i + CHUNK); j++) {
          jobs.push({ name: GC, data: parsePayload('gc payload', GcPayload, { kind: 'litter', dryRun: true }), opts: gcJobOptions });
        }
        await queue.addBulk(jobs);
      }
      await drained(queue, JOBS, () => processed);
    });
  } finally {
    await client.close();
    await workers.close(5_000);
    await closeRedis(connection);
  }
}

// Bare BullMQ with the same concurrency.
async function runBare(env: BenchEnv, concurrency: number, opts: JobsOptions | undefined): Promise<RunResult> {
  await env.flush();
  const connection = bareConnection(env.redisUrl);
  let processed = 0;
  const worker = new Worker('bare', async () => void (processed += 1), { connection, concurrency, prefix: '{bare}' });
  const queue = new Queue('bare', { connection, prefix: '{bare}' });
  try {
    await Promise.all([worker.waitUntilReady(), queue.waitUntilReady()]);
    return await measure(env, async () => {
      for (let i = 0; i < JOBS; i += CHUNK) {
        const jobs = [];
        for (let j = i; j < Math.min(JOBS, i + CHUNK); j++) jobs.push({ name: 'noop', data: { kind: 'litter', dryRun: true, limit: 1000 }, ...(opts ? { opts } : {}) });
        await queue.addBulk(jobs);
      }
      await drained(queue, JOBS, () => processed);
    });
  } finally {
    await queue.close();
    await worker.close();
  }
}

const WRAPPER_CALLS = scaled(100_000, 10_000);

/**
 * The wrapper alone, without Redis: microseconds a job of the fleet's wrapped no-op processor
 * against the bare no-op, called alternately with a job object as BullMQ hands it over.
 */
async function wrapperCost(fleet: Fleet, rounds: number): Promise<{ wrapped: number[]; bare: number[] }> {
  const logger = fleet.createLogger({ level: 'info', destination: pino.destination({ dest: '/dev/null', sync: true }) });
  const bare = async (): Promise<void> => undefined;
  const wrapped = fleet.wrapProcessor({ definition: fleet.queues.QUEUES.gc, bullQueueName: 'gc', processor: bare, deadlineMs: 60_000, logger, cancellation: new fleet.JobCancellation() });
  const data = { kind: 'litter', dryRun: true };
  const time = async (call: (job: Job) => Promise<unknown>): Promise<number> => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < WRAPPER_CALLS; i++) await call({ id: String(i), data, opts: { attempts: 3 }, attemptsMade: 0 } as unknown as Job);
    return Number(process.hrtime.bigint() - started) / 1_000 / WRAPPER_CALLS;
  };
  const out = { wrapped: [] as number[], bare: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    out.bare.push(await time(bare));
    out.wrapped.push(await time(wrapped));
  }
  return out;
}

export default async function queueBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 7;
  await ensureBuilt(ctx.log);
  const fleet = await loadFleet();
  const { GC, gcJobOptions } = fleet.queues;
  return withBenchEnv('queue', async (env) => {
    // Both sides at the same concurrency (the fleet's per-queue default for gc is lower).
    const concurrency = 4;
    const base = env.config();
    const config = { ...base, worker: { ...base.worker, concurrency } };
    ctx.log(`${JOBS} no-op jobs per run, concurrency ${concurrency}, ${repeats} repeats, 4 variants interleaved`);
    const runs = await interleave(
      repeats,
      {
        fleet: () => runFleet(fleet, env, config, 'info'),
        bare: () => runBare(env, concurrency, undefined),
        bare_fleet_job_options: () => runBare(env, concurrency, gcJobOptions),
        fleet_logging_off: () => runFleet(fleet, env, config, 'silent'),
      },
      (variant, repeat, r) => ctx.log(`repeat ${repeat + 1}: ${variant} ${r.jobsPerS.toFixed(0)} jobs/s, ${r.nodeCpuUsPerJob.toFixed(0)} us node CPU + ${r.redisCpuUsPerJob.toFixed(0)} us redis CPU per job`),
    );
    const wrapper = await wrapperCost(fleet, Math.max(3, Math.min(repeats, 7)));
    const pick = (key: keyof RunResult) => Object.fromEntries(Object.entries(runs).map(([variant, list]) => [variant, (list as RunResult[]).map((r) => r[key])])) as Record<keyof typeof runs, number[]>;
    const tput = pick('jobsPerS');
    const nodeCpu = pick('nodeCpuUsPerJob');
    const redisCpu = pick('redisCpuUsPerJob');
    const ratio = summarize(pairedRatios(tput.fleet, tput.bare), 'fleet/bare');
    const ratioSameOptions = summarize(pairedRatios(tput.fleet, tput.bare_fleet_job_options), 'fleet/bare with the same job options');
    const retentionRatio = summarize(pairedRatios(tput.bare_fleet_job_options, tput.bare), 'bare with the fleet job options/bare');
    const extra = (a: number[], b: number[]) => summarize(a.map((v, i) => v - b[i]!), 'us/job');
    return {
      params: { jobs: JOBS, concurrency, repeats, addBulkChunk: CHUNK, fleetQueue: GC, fleetLogLevel: 'info (to /dev/null)' },
      metrics: {
        fleet_jobs_per_s: summarize(tput.fleet, 'jobs/s'),
        bare_jobs_per_s: summarize(tput.bare, 'jobs/s'),
        ratio,
        ratio_same_job_options: ratioSameOptions,
        wrapper_us_per_job: summarize(wrapper.wrapped, 'us'),
        bare_processor_us_per_job: summarize(wrapper.bare, 'us'),
        fleet_node_cpu_per_job: summarize(nodeCpu.fleet, 'us'),
        bare_node_cpu_per_job: summarize(nodeCpu.bare, 'us'),
        fleet_redis_cpu_per_job: summarize(redisCpu.fleet, 'us'),
        bare_redis_cpu_per_job: summarize(redisCpu.bare, 'us'),
      },
      profile: {
        bare_fleet_job_options_jobs_per_s: summarize(tput.bare_fleet_job_options, 'jobs/s'),
        'job options alone: bare with the fleet job options / bare': retentionRatio,
        fleet_logging_off_jobs_per_s: summarize(tput.fleet_logging_off, 'jobs/s'),
        'job options: extra redis CPU (bare+fleet opts - bare)': extra(redisCpu.bare_fleet_job_options, redisCpu.bare),
        'job options: extra node CPU (bare+fleet opts - bare)': extra(nodeCpu.bare_fleet_job_options, nodeCpu.bare),
        'wrapper: extra node CPU (fleet no-log - bare+fleet opts)': extra(nodeCpu.fleet_logging_off, nodeCpu.bare_fleet_job_options),
        'logging: extra node CPU (fleet - fleet no-log)': extra(nodeCpu.fleet, nodeCpu.fleet_logging_off),
      },
      targets: [target('fleet/bare throughput ratio (median of paired ratios)', ratio.median, '>=', 0.9)],
      notes: [
        'CPU per job is the steadier figure on a shared machine: node = this process (producer and worker), redis = the private redis-server',
        'job options: the fleet bounds retention (removeOnComplete count/age, removeOnFail), so completions also trim old jobs in Redis',
        'wrapper: payload validation, deadline timer, cancellation entry; the AbortController and child logger only when the processor uses them (a no-op uses neither)',
        `wrapper_us_per_job: ${WRAPPER_CALLS} calls of the wrapped no-op without Redis, against the bare no-op called the same way (bare_processor_us_per_job)`,
        'ratio_same_job_options: the fleet against bare BullMQ given the fleet job options (bounded retention); ratio: against bare BullMQ defaults, which keep every completed job forever',
        "logging: what the fleet logs per job at info (since issue 16 nothing for a success: 'job completed' is at debug)",
      ],
    };
  });
}
