// A job hash whose `data` is not JSON (written by a broken producer, or corrupted) fails at once
// in a real worker process: unrecoverable, with a reason naming the job and the queue, without
// stalling; `fleet status` shows it failed, and the failed list stays readable for operators.
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { loadConfig } from '../../src/config.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';
import { runFleet, startFleet, cliJson } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

// What a producer that does not speak JSON leaves in the job hash.
const BROKEN = '{"manifest": {"schemaVersion": 1, "name": "x"';

describe('a job whose data cannot be parsed', () => {
  it('fails at once as JobDataUnreadable, never stalls, and stays listable', async () => {
    const env = await testEnv({ FLEET_LOCK_DURATION_MS: '1000', FLEET_STALLED_INTERVAL_MS: '500' });
    const config = loadConfig(env);
    const redis = testConnection(config);
    const queue = new Queue('bake', { connection: redis, prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix('bake') });
    addCleanup(() => queue.close());

    const worker = startFleet(['worker', '--queues', 'bake'], env);
    await worker.waitForOutput('serving bake');
    // Corrupt the hash while the queue is paused, so the worker only ever sees the broken data.
    await queue.pause();
    const job = await queue.add('bake', { manifest: { schemaVersion: 1, name: 'x', runtime: 'node22' } });
    const jobKey = fleetKeys(config.redis.prefix, config.redis.keyLayout).bullQueue('bake', String(job.id));
    await redis.hset(jobKey, 'data', BROKEN);
    await queue.resume();

    await waitFor('the job to fail', async () => ((await queue.getJobState(job.id!)) === 'failed' ? true : undefined));
    const [failedReason, stalled, attemptsMade] = await redis.hmget(jobKey, 'failedReason', 'stc', 'atm');
    expect(failedReason).toMatch(new RegExp(`^JobDataUnreadable: job ${job.id} on queue bake: data is not valid JSON \\(`));
    expect(Number(stalled ?? 0)).toBe(0);
    expect(Number(attemptsMade)).toBe(1);

    const status = await runFleet(['status', '--json'], env);
    expect(status.code).toBe(0);
    expect(cliJson(status.stdout).queues.bake).toMatchObject({ active: 0, waiting: 0, failed: 1 });

    // The failed job is readable by BullMQ (Bull Board, `fleet queues retry-failed`): the raw data
    // is kept as a string; retried, it fails again without running.
    const failed = await queue.getFailed();
    expect(failed.map((j) => [j.id, j.data])).toEqual([[job.id, { unreadableData: BROKEN }]]);
    const retried = await runFleet(['queues', 'retry-failed', 'bake', '--json'], env);
    expect(retried.code).toBe(0);
    await waitFor('the retried job to fail again', async () => {
      const [state, reason] = await Promise.all([queue.getJobState(job.id!), redis.hget(jobKey, 'failedReason')]);
      return state === 'failed' && reason?.startsWith('PayloadInvalid: ') ? true : undefined;
    });
  });
});
