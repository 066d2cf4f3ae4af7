// waitForJob against a real Redis that goes away: the wait keeps polling through the outage and
// settles with the job's result; no Redis error escapes as an unhandled rejection (BullMQ's own
// Job.waitUntilFinished checks state inside an async Promise executor and would crash here).
import { Queue, QueueEvents, Worker } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRedis } from '../../src/redis.js';
import { waitForJob } from '../../src/producers/wait-for-job.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';
import { RedisServer } from '../helpers/redis-server.js';

const PREFIX = '{wait}';
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('waitForJob', () => {
  it('waits through a Redis outage that began before the wait, then returns the result', { timeout: 60_000 }, async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('wait-redis'), true);
    addCleanup(() => server.stop('SIGKILL'));
    const client = createRedis({ url: server.url, role: 'client', commandTimeoutMs: 500, name: 'wait-test' });
    const blocking = createRedis({ url: server.url, role: 'worker', commandTimeoutMs: 500, name: 'wait-test-events' });
    const queue = new Queue('w', { connection: client, prefix: PREFIX });
    const events = new QueueEvents('w', { connection: blocking, prefix: PREFIX });
    addCleanup(async () => {
      const within = (closing: Promise<void>) => Promise.race([closing.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      await within(events.close());
      await within(queue.close());
      client.disconnect();
      blocking.disconnect();
    });
    // The outage is intended: keep the connection errors out of the test output.
    queue.on('error', () => undefined);
    events.on('error', () => undefined);
    await events.waitUntilReady();
    const job = await queue.add('op', { n: 21 });

    await server.stop('SIGTERM');
    // Long enough for commands to fail: restart only after the client has failed to reconnect 3 times.
    let reconnects = 0;
    const threeFailedReconnects = new Promise<void>((resolve) =>
      client.on('reconnecting', () => {
        if (++reconnects === 3) resolve();
      }),
    );
    const waiting = waitForJob<{ doubled: number }>(queue, String(job.id), events, 45_000, 50);
    await threeFailedReconnects;
    await server.start();
    const workerConnection = createRedis({ url: server.url, role: 'worker', commandTimeoutMs: 500, name: 'wait-test-worker' });
    const worker = new Worker('w', async (j) => ({ doubled: (j.data as { n: number }).n * 2 }), { connection: workerConnection, prefix: PREFIX });
    worker.on('error', () => undefined);
    // A close that hangs (bullmq#4656; it hung CI's afterEach twice after a restart) is forced, and the connection dropped.
    addCleanup(async () => {
      await Promise.race([worker.close(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      await Promise.race([worker.close(true), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      workerConnection.disconnect();
    });

    expect(await waiting).toEqual({ doubled: 42 });
    expect(unhandled).toEqual([]);
  });

  it('rejects with the typed failure of a job that failed for good', async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('wait-redis'), false);
    addCleanup(() => server.stop('SIGKILL'));
    const client = createRedis({ url: server.url, role: 'client', commandTimeoutMs: 1_000, name: 'wait-test' });
    const blocking = createRedis({ url: server.url, role: 'worker', commandTimeoutMs: 1_000, name: 'wait-test-events' });
    const queue = new Queue('f', { connection: client, prefix: PREFIX });
    const events = new QueueEvents('f', { connection: blocking, prefix: PREFIX });
    const worker = new Worker('f', async () => Promise.reject(new Error('boom')), {
      connection: createRedis({ url: server.url, role: 'worker', commandTimeoutMs: 1_000, name: 'wait-test-worker' }),
      prefix: PREFIX,
    });
    addCleanup(async () => {
      await worker.close();
      await events.close();
      await queue.close();
      client.disconnect();
      blocking.disconnect();
    });
    await events.waitUntilReady();
    const job = await queue.add('op', {});
    await expect(waitForJob(queue, String(job.id), events, 20_000)).rejects.toMatchObject({ message: expect.stringContaining('boom') });
    await expect(waitForJob(queue, 'no-such-job', events, 100, 20)).rejects.toMatchObject({ code: 'WaitTimeout' });
  });
});
