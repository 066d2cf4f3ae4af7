// At-least-once across real processes: a SIGKILLed worker's active job is finished by another
// worker process; SIGTERM lets an in-flight job finish, with no stall, and exits 0.
import { QueueEvents } from 'bullmq';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { createFleetClient } from '../../src/producers/fleet-client.js';
import { loadConfig } from '../../src/config.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testEnv, testConnection } from '../helpers/fleet-env.js';
import { ROOT, killGroup, spawnTracked } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'gated-worker.mjs');

async function setup() {
  const env = await testEnv({ FLEET_LOCK_DURATION_MS: '1000', FLEET_STALLED_INTERVAL_MS: '500', FLEET_MAX_STALLED_COUNT: '2' });
  const config = loadConfig(env);
  const redis = testConnection(config);
  const client = createFleetClient({ config });
  addCleanup(() => client.close());
  const p = config.redis.prefix;
  return { env, config, redis, client, p };
}

describe('worker processes', () => {
  it("a SIGKILLed worker's active job is picked up by another worker process and completes", async () => {
    const { env, redis, client, p } = await setup();
    const first = spawnTracked(process.execPath, [FIXTURE], { env });
    await first.waitForOutput('ready');
    const { jobId } = await client.gc({ kind: 'litter' });
    await waitFor('the first worker to start the job', async () => ((await redis.llen(`${p}:test:started`)) === 1 ? true : undefined));
    const second = spawnTracked(process.execPath, [FIXTURE], { env });
    await second.waitForOutput('ready');
    killGroup(first.child, 'SIGKILL');
    await first.exited;
    await redis.set(`${p}:test:release`, '1');
    const queue = client.pool.queue('gc');
    // State first, then the job: a job read before it completes carries no return value.
    const job = await waitFor('the job to complete', async () => ((await queue.getJobState(jobId)) === 'completed' ? queue.getJob(jobId) : undefined));
    expect(job.returnvalue).toEqual({ pid: second.child.pid, kind: 'litter' });
    expect(await redis.lrange(`${p}:test:done`, 0, -1)).toEqual([`${jobId}:${second.child.pid}`]);
    expect(job.attemptsStarted).toBeGreaterThanOrEqual(2);
  });

  it('SIGTERM with a job in flight: the job completes, no stalled event, exit code 0', async () => {
    const { env, config, redis, client, p } = await setup();
    const events = new QueueEvents('gc', { connection: testConnection(config, 'worker'), prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix('gc') });
    addCleanup(() => events.close());
    await events.waitUntilReady();
    const stalled: string[] = [];
    events.on('stalled', ({ jobId }) => stalled.push(jobId));
    const worker = spawnTracked(process.execPath, [FIXTURE], { env });
    await worker.waitForOutput('ready');
    const { jobId } = await client.gc({ kind: 'litter' });
    await waitFor('the job to start', async () => ((await redis.llen(`${p}:test:started`)) === 1 ? true : undefined));
    killGroup(worker.child, 'SIGTERM');
    // The worker is draining: it must not pick up new work, but the active job continues.
    await redis.set(`${p}:test:release`, '1');
    const exit = await worker.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    const job = await client.pool.queue('gc').getJob(jobId);
    expect(await job!.getState()).toBe('completed');
    expect(job!.attemptsStarted).toBe(1);
    expect(stalled).toEqual([]);
  });
});
