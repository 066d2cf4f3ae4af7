/**
 * `provision`: the 1,000 x 100 x 4 load test (1,000 concurrent calls for 100 workspaces from 10
 * producer clients against 4 real worker processes), repeated; latency percentiles and the
 * invariants (created, duplicates, orphans). The bare baseline is the same number of jobs through
 * plain BullMQ with a no-op processor (what the queue alone costs).
 */
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { withBenchEnv } from './lib/bench-env.js';
import { target, type Benchmark } from './lib/report.js';
import { summarize } from './lib/stats.js';
import { runProvisionLoad } from './provision-load.js';

const REQUESTS = 1_000;
const WORKSPACES = 100;

// Bare BullMQ: the same calls and dedup ids, a no-op processor in this process.
async function bareRun(url: string, prefix: string): Promise<number> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const eventsConnection = connection.duplicate();
  eventsConnection.on('error', () => undefined);
  const queue = new Queue('bare-provision', { connection, prefix });
  const events = new QueueEvents('bare-provision', { connection: eventsConnection, prefix });
  const worker = new Worker('bare-provision', async (job) => ({ handle: `h-${job.data.workspaceId}` }), { connection, prefix, concurrency: 16 });
  try {
    await events.waitUntilReady();
    const latencies = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const t = performance.now();
        const job = await queue.add('provision', { workspaceId: `w${i % WORKSPACES}` }, { deduplication: { id: `provision:w${i % WORKSPACES}` }, removeOnComplete: { age: 3600, count: 1000 } });
        await job.waitUntilFinished(events, 60_000);
        return performance.now() - t;
      }),
    );
    return Math.max(...latencies);
  } finally {
    await worker.close();
    await events.close();
    await queue.close();
    connection.disconnect();
    eventsConnection.disconnect();
  }
}

const provisionBench: Benchmark = async (ctx) => {
  const repeats = ctx.repeats ?? 3;
  return withBenchEnv('provision', async (env) => {
    const p50: number[] = [];
    const p99: number[] = [];
    const max: number[] = [];
    const bareMax: number[] = [];
    let created = 0;
    let duplicates = 0;
    let orphans = 0;
    let inconsistent = 0;
    let failed = 0;
    for (let repeat = 0; repeat < repeats; repeat++) {
      const prefix = `{load-${repeat}}`;
      const result = await runProvisionLoad({ env: env.fleetEnv({ FLEET_PREFIX: prefix, FLEET_HOME: await env.subdir(`home-${repeat}`), FLEET_HEARTBEAT_INTERVAL_MS: '1000' }), requests: REQUESTS, workspaces: WORKSPACES, producers: 10, workers: 4 });
      p50.push(result.p50_ms);
      p99.push(result.p99_ms);
      max.push(result.max_ms);
      created = Math.min(created || result.created, result.created);
      duplicates += result.duplicates;
      orphans += result.orphans;
      inconsistent += result.inconsistentCallers;
      failed += result.failed;
      bareMax.push(await bareRun(env.redisUrl, `{bare-${repeat}}`));
      ctx.log(`repeat ${repeat + 1}: p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, created ${result.created}, duplicates ${result.duplicates}, orphans ${result.orphans}; bare BullMQ no-op max ${Math.round(bareMax[repeat]!)} ms`);
    }
    const p99s = summarize(p99, 'ms');
    return {
      params: { requests: REQUESTS, workspaces: WORKSPACES, producers: 10, workers: 4, provider: 'local', repeats },
      metrics: { p50_ms: summarize(p50, 'ms'), p99_ms: p99s, max_ms: summarize(max, 'ms'), bare_noop_max_ms: summarize(bareMax, 'ms') },
      targets: [
        target('created == workspaces (min over repeats)', created, '>=', WORKSPACES),
        target('duplicates', duplicates, '<=', 0),
        target('orphans', orphans, '<=', 0),
        target('callers that saw two handles', inconsistent, '<=', 0),
        target('failed calls', failed, '<=', 0),
        target('p99 ms', p99s.median, '<', 2_000),
      ],
      notes: ['All 1,000 calls are issued at once, so p50 is close to the time to provision all 100 workspaces; the bare line is the same calls through plain BullMQ with a no-op processor.'],
    };
  });
};

export default provisionBench;
