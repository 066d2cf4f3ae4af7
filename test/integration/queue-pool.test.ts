// A producer's queues outlive a Redis that gave no answer when they were made: BullMQ keeps the
// outcome of a Queue's handshake (its version check), so a Queue made while Redis is paused would
// fail every call after, even once Redis is back. The pool drops it and makes a new one.
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { QueuePool } from '../../src/producers/queue-pool.js';
import { closeRedis, createRedis } from '../../src/redis.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';
import { RedisServer } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

describe('QueuePool', () => {
  it('replaces a queue made while Redis gave no answer, once Redis answers again', async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('queue-pool'), false);
    addCleanup(() => server.stop());
    const client = createRedis({ url: server.url, role: 'client', commandTimeoutMs: 300, name: 'pool-test' });
    addCleanup(() => closeRedis(client));
    expect(await client.ping()).toBe('PONG');
    const pool = new QueuePool(client, fleetKeys('{pool-test}', 'single-slot'), () => createRedis({ url: server.url, role: 'worker', commandTimeoutMs: 300, name: 'pool-test-events' }));
    addCleanup(() => pool.close());

    server.child!.kill('SIGSTOP');
    const resume = () => server.child!.kill('SIGCONT');
    addCleanup(resume);
    const first = pool.queue('persist');
    await expect(first.getJobCounts('waiting')).rejects.toThrow();
    resume();

    // Redis answers again, and so does the pool: a queue that can add and count jobs.
    await waitFor('Redis to answer', async () => ((await client.ping().catch(() => null)) === 'PONG' ? true : undefined));
    const counts = await waitFor('the pool to count jobs again', async () => await pool.queue('persist').getJobCounts('waiting'), 10_000);
    expect(counts).toEqual({ waiting: 0 });
    expect(pool.queue('persist')).not.toBe(first);
    await pool.queue('persist').add('persist', { n: 1 });
    expect(await pool.queue('persist').getJobCounts('waiting')).toEqual({ waiting: 1 });
    expect(pool.names()).toEqual(['persist']);
  });
});
