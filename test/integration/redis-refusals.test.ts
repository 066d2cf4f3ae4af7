// Redis refusing writes (out of memory under noeviction, a read-only replica), on a redis-server
// this file owns: the fleet client's persist fails as a typed, retryable RedisUnavailableError
// and writes neither the intent nor the job; and the Redis 7 semantics that guarantee it hold
// (OOM is checked when a command is queued, and once per EXEC for the scripts inside it).
import type { ChainableCommander } from 'ioredis';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { RedisUnavailableError } from '../../src/errors/redis-unavailable-error.js';
import { fleetKeys } from '../../src/keys.js';
import { RedisCommandTimeoutError } from '../../src/lib/redis-command-timeout.js';
import { redisErrorCode } from '../../src/lib/redis-error-code.js';
import { createFleetClient } from '../../src/producers/fleet-client.js';
import { PERSIST, persistDeduplication, persistJobOptions } from '../../src/queues/persist.js';
import { PersistIntentStore } from '../../src/state/persist-intent.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testConfig } from '../helpers/fleet-env.js';
import { RedisServer, freePort } from '../helpers/redis-server.js';

// A redis-server of this test, an admin connection to it, and a fleet config pointing at it.
async function ownRedis(overrides: Record<string, string> = {}) {
  const server = await RedisServer.startOnFreePort(await tempDir('redis-own'), false);
  addCleanup(() => server.stop());
  const admin = new Redis(server.url, { connectionName: 'own-admin' });
  addCleanup(() => admin.disconnect());
  // The one-transaction layout unless a test names another (the two-step layouts have their own test below).
  const { config } = await testConfig({ REDIS_URL: server.url, FLEET_REDIS_KEY_LAYOUT: 'single-slot', ...overrides });
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  const client = createFleetClient({ config });
  addCleanup(() => client.close());
  await client.addresses.bumpGeneration('ws');
  await client.addresses.publish({ workspaceId: 'ws', handle: 'local:ws', generation: 1, hostId: config.hostId, provider: 'local' });
  const bull = `${keys.queuePrefix(`${PERSIST}@${config.hostId}`)}:${PERSIST}@${config.hostId}`;
  // Everything a persist request writes: the intent, the request counter, the job counter and jobs.
  const written = async () => ({
    intent: await admin.hgetall(keys.persistIntent('ws')),
    lastSeq: await admin.hget(keys.persistStatus('ws'), 'lastSeq'),
    jobCounter: await admin.get(`${bull}:id`),
    waiting: await admin.llen(`${bull}:wait`),
  });
  return { server, admin, config, keys, client, written, port: server.port };
}

// Makes Redis refuse every command that can grow memory: maxmemory below what it uses now.
async function exhaustMemory(admin: Redis): Promise<void> {
  const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
  await admin.config('SET', 'maxmemory', String(Math.floor(used / 2)));
}

describe('the fleet client while Redis refuses writes', () => {
  it('out of memory: persist fails as RedisUnavailable (OOM), and neither the intent nor the job is written', async () => {
    const { admin, client, written, port } = await ownRedis();
    const first = await client.persist({ workspaceId: 'ws', generation: 1, delete: false, reason: 'checkpoint' });
    const before = await written();
    expect(before).toMatchObject({ lastSeq: String(first.seq), jobCounter: first.jobId, waiting: 1 });

    await exhaustMemory(admin);
    const error = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ code: 'RedisUnavailable', retryable: true, refusal: 'OOM', address: `127.0.0.1:${port}` });
    expect(await written()).toEqual(before);

    await admin.config('SET', 'maxmemory', '0');
    const after = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' });
    expect(after.seq).toBe(first.seq + 1);
    expect(await admin.hget(`${client.keys.persistIntent('ws')}`, 'delete')).toBe('1');
  });

  it('memory running out right after the merge reaches Redis never leaves an intent without its job', async () => {
    const { admin, config, keys, written } = await ownRedis();
    const before = await written();
    // The client's connection, instrumented: once a script touching the intent has been answered
    // on it, memory runs out before the next command (what a concurrent writer can cause).
    const raw = new Redis(config.redis.url!, { connectionName: 'own-client' });
    addCleanup(() => raw.disconnect());
    let fired = false;
    const connection = new Proxy(raw, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if ((prop !== 'eval' && prop !== 'evalsha') || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          const result = (await value.apply(target, args)) as unknown;
          if (!fired && args.includes(keys.persistIntent('ws'))) {
            fired = true;
            await exhaustMemory(admin);
          }
          return result;
        };
      },
    });
    const client = createFleetClient({ config, connection });
    addCleanup(() => client.close());
    const outcome = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' }).then(
      () => 'enqueued',
      (error: unknown) => (error instanceof RedisUnavailableError ? 'refused' : error),
    );
    await admin.config('SET', 'maxmemory', '0');
    const after = await written();
    const merged = after.lastSeq !== before.lastSeq;
    const added = after.jobCounter !== before.jobCounter;
    expect({ outcome, merged, added }).toEqual(outcome === 'enqueued' ? { outcome, merged: true, added: true } : { outcome: 'refused', merged: false, added: false });
  });

  it('scripts flushed under a live connection: the job add that answers NOSCRIPT inside EXEC is completed on its own', async () => {
    const { admin, client, written } = await ownRedis();
    const first = await client.persist({ workspaceId: 'ws', generation: 1, delete: false, reason: 'checkpoint' });
    // The connection has sent BullMQ's addStandardJob once, so ioredis now sends it as EVALSHA.
    await admin.script('FLUSH');
    const second = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' });
    // The add inside the EXEC was refused (Redis counts the error replies it sent by code).
    expect(await admin.info('errorstats')).toMatch(/errorstat_NOSCRIPT:count=[1-9]/);
    expect(second.seq).toBe(first.seq + 1);
    // Deduplicated into the first, still waiting, job: the merged delete is what it will run.
    expect(second.jobId).toBe(first.jobId);
    expect(await written()).toMatchObject({ lastSeq: String(second.seq), intent: { seq: String(second.seq), delete: '1' } });
  });

  it('a read-only replica: persist fails as RedisUnavailable (READONLY), nothing written', async () => {
    const { admin, client, written } = await ownRedis();
    const before = await written();
    // A replica of a primary that does not exist keeps its data and refuses writes.
    await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()));
    addCleanup(() => admin.call('REPLICAOF', 'NO', 'ONE'));
    await expect(client.persist({ workspaceId: 'ws', generation: 1, delete: true })).rejects.toMatchObject({ code: 'RedisUnavailable', refusal: 'READONLY' });
    expect(await written()).toEqual(before);
  });

  it('a paused Redis (no answer within the command timeout): persist fails as RedisUnavailable (NOANSWER), typed by class; once Redis answers, the retry lands once', async () => {
    const { server, client, written, port } = await ownRedis({ FLEET_REDIS_COMMAND_TIMEOUT_MS: '300' });
    await client.persist({ workspaceId: 'ws', generation: 1, delete: false, reason: 'checkpoint' });
    // SIGSTOP: the connection stays up and nothing answers (a restart's stall, a long fork, a freeze).
    process.kill(server.child!.pid!, 'SIGSTOP');
    const resume = () => process.kill(server.child!.pid!, 'SIGCONT');
    addCleanup(resume);
    const error = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' }).catch((e: unknown) => e);
    // Every call of the client types it the same way, not only persist.
    const noAnswer = { code: 'RedisUnavailable', refusal: 'NOANSWER', address: `127.0.0.1:${port}` };
    await expect(client.provision({ workspaceId: 'ws2' })).rejects.toMatchObject(noAnswer);
    await expect(client.openTurn({ workspaceId: 'ws', turnId: 't1' })).rejects.toMatchObject(noAnswer);
    await expect(client.startCheckpoints('ws')).rejects.toMatchObject(noAnswer);
    resume();
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ code: 'RedisUnavailable', retryable: true, refusal: 'NOANSWER', address: `127.0.0.1:${port}` });
    expect((error as RedisUnavailableError).cause).toBeInstanceOf(RedisCommandTimeoutError);
    expect(redisErrorCode((error as RedisUnavailableError).cause)).toBe('NOANSWER');
    // The timed-out request may have been applied once Redis woke: the retry finds the same
    // pending persist (one job, the intent covering both requests), never a second one.
    const retried = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' });
    const after = await written();
    expect(after).toMatchObject({ lastSeq: String(retried.seq), waiting: 1 });
    expect(after.intent).toMatchObject({ delete: '1' });
  });
});

describe('Redis 7: the OOM check of a transaction of scripts', () => {
  it('memory running out between queueing and EXEC refuses both the intent merge and BullMQ addStandardJob', async () => {
    const { admin, config, keys, written } = await ownRedis();
    // One connection, in MULTI by hand, so that memory can run out after the commands are queued.
    const conn = new Redis(config.redis.url!, { connectionName: 'own-multi' });
    addCleanup(() => conn.disconnect());
    const queue = new Queue(`${PERSIST}@${config.hostId}`, { connection: conn, prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix(`${PERSIST}@${config.hostId}`) });
    addCleanup(() => queue.close());
    await queue.waitUntilReady();
    const before = await written();

    expect(await conn.call('MULTI')).toBe('OK');
    const queued: Promise<unknown>[] = [];
    // The very commands add-persist-job queues: the merge script (as EVAL) and BullMQ's job add.
    const onConnection = { eval: (...args: Parameters<Redis['eval']>) => void queued.push(conn.eval(...args)) } as unknown as ChainableCommander;
    const request = { workspaceId: 'ws', generation: 1, delete: true, force: false, reason: 'turn-end' as const, requestId: '0f8e2a36-2d3c-4d55-9a52-7b4c7f3f1c11' };
    new PersistIntentStore(conn, keys).queueMerge(onConnection, 'ws', request);
    queued.push(queue.add(PERSIST, request, { ...persistJobOptions, deduplication: persistDeduplication('ws') }).then((job) => job.id));
    expect(await Promise.all(queued)).toEqual(['QUEUED', 'QUEUED']);

    await exhaustMemory(admin);
    const replies = (await conn.call('EXEC')) as unknown[];
    expect(replies.map((r) => redisErrorCode(r))).toEqual(['OOM', 'OOM']);
    expect(await written()).toEqual(before);
    await admin.config('SET', 'maxmemory', '0');
  });

  it('per-queue layout (intent and job in different slots): merge, then add; out of memory refuses the merge and writes nothing', async () => {
    const { admin, client, written, keys } = await ownRedis({ FLEET_REDIS_KEY_LAYOUT: 'per-queue' });
    const first = await client.persist({ workspaceId: 'ws', generation: 1, delete: false, reason: 'checkpoint' });
    const before = await written();
    // The job sits under the queue's own tag.
    expect(before).toMatchObject({ lastSeq: String(first.seq), jobCounter: first.jobId, waiting: 1 });
    expect(keys.queuePrefix('persist@local')).not.toBe(keys.prefix);

    await exhaustMemory(admin);
    const error = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ refusal: 'OOM' });
    expect(await written()).toEqual(before);

    await admin.config('SET', 'maxmemory', '0');
    const after = await client.persist({ workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end' });
    expect(after.seq).toBe(first.seq + 1);
    // Deduplicated into the waiting job, which takes both requests.
    expect(after.jobId).toBe(first.jobId);
  });
});
