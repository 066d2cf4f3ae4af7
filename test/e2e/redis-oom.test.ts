// Redis out of memory under a running `fleet up` (its own redis-server, noeviction): the HTTP API
// answers 503 RedisUnavailable with Retry-After, /readyz reports Redis not writable, the CLI names
// Redis, its address and the refusal, and no persist request is half written. Memory back: the
// fleet recovers without a restart. And Redis paused (no answer in time): the same typed 503 and
// CLI error, not an untyped 500.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { REDIS_RETRY_AFTER_S } from '../../src/errors/redis-unavailable-error.js';
import { fleetKeys } from '../../src/keys.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testEnv } from '../helpers/fleet-env.js';
import { runFleet, startFleet } from '../helpers/processes.js';
import { RedisServer } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';
import { answer } from '../helpers/web-harness.js';

describe('Redis out of memory', () => {
  it('HTTP 503 with Retry-After, /readyz not ready, the CLI names the refusal, nothing half written; then recovery', async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('redis-oom'), false);
    addCleanup(() => server.stop());
    const admin = new Redis(server.url, { connectionName: 'oom-admin' });
    addCleanup(() => admin.disconnect());
    const env = await testEnv({ REDIS_URL: server.url, FLEET_HTTP_PORT: '0' });
    const keys = fleetKeys(loadConfig(env).redis.prefix, loadConfig(env).redis.keyLayout);
    const up = startFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    const post = (path: string, body: unknown) => fetch(`${web}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    expect((await answer(post('/v1/workspaces/ws/provision?wait=true', {}))).status).toBe(200);
    await waitFor('the fleet to be ready', async () => ((await fetch(`${web}/readyz`)).status === 200 ? true : undefined));

    // maxmemory below what Redis uses now: every command that can grow memory is refused.
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    await admin.config('SET', 'maxmemory', String(Math.floor(used / 2)));
    const bull = `${keys.queuePrefix('persist@local')}:persist@local`;
    const written = async () => ({ intent: await admin.hgetall(keys.persistIntent('ws')), lastSeq: await admin.hget(keys.persistStatus('ws'), 'lastSeq'), jobs: await admin.get(`${bull}:id`) });
    const before = await written();

    const refused = await answer(post('/v1/workspaces/ws/persist', { generation: 1, delete: true, reason: 'turn-end' }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe(String(REDIS_RETRY_AFTER_S));
    expect(refused.body.error.code).toBe('RedisUnavailable');
    expect(refused.body.error.message).toMatch(new RegExp(`^Redis at 127\\.0\\.0\\.1:${server.port} refused the command \\(OOM\\): `));

    const ready = await answer(fetch(`${web}/readyz`));
    expect(ready).toMatchObject({ status: 503, body: { ready: false, checks: { redis: { ok: true }, redisWritable: { ok: false } } } });
    expect(ready.body.checks.redisWritable.detail).toContain('(OOM)');

    const cli = await runFleet(['persist', 'ws', '--delete'], env);
    expect(cli.code).toBe(1);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr.trim()).toMatch(new RegExp(`^fleet: RedisUnavailable: Redis at 127\\.0\\.0\\.1:${server.port} refused the command \\(OOM\\): OOM command not allowed`));
    expect(await written()).toEqual(before);

    await admin.config('SET', 'maxmemory', '0');
    await waitFor('/readyz to recover', async () => ((await fetch(`${web}/readyz`)).status === 200 ? true : undefined));
    const persisted = await answer(post('/v1/workspaces/ws/persist?wait=true', { generation: 1, delete: true, reason: 'turn-end' }));
    expect(persisted).toMatchObject({ status: 200, body: { result: { workspaceId: 'ws', generation: 1 } } });
  });

  it('Redis paused (no answer within the command timeout): HTTP 503 RedisUnavailable (NOANSWER), the CLI names Redis and its address; then recovery', async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('redis-paused'), false);
    addCleanup(() => server.stop());
    const env = await testEnv({ REDIS_URL: server.url, FLEET_HTTP_PORT: '0', FLEET_REDIS_COMMAND_TIMEOUT_MS: '500' });
    const up = startFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    const post = (path: string, body: unknown) => fetch(`${web}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await answer(post('/v1/workspaces/ws/provision?wait=true', {}))).status).toBe(200);

    // SIGSTOP: connections stay open and nothing answers (a stalled restart, a frozen host).
    server.child!.kill('SIGSTOP');
    const resume = () => server.child!.kill('SIGCONT');
    addCleanup(resume);
    const refused = await answer(post('/v1/workspaces/ws/persist', { generation: 1, delete: true, reason: 'turn-end' }));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe(String(REDIS_RETRY_AFTER_S));
    expect(refused.body.error.code).toBe('RedisUnavailable');
    expect(refused.body.error.message).toMatch(new RegExp(`^Redis at 127\\.0\\.0\\.1:${server.port} could not be reached \\(NOANSWER\\): Redis gave no answer to \\w+ within 500 ms`));
    const cli = await runFleet(['persist', 'ws', '--delete'], env);
    expect(cli.code).toBe(1);
    expect(cli.stderr.trim()).toMatch(new RegExp(`^fleet: RedisUnavailable: Redis at 127\\.0\\.0\\.1:${server.port} could not be reached \\(NOANSWER\\)`));

    resume();
    await waitFor('/readyz to recover', async () => ((await fetch(`${web}/readyz`)).status === 200 ? true : undefined));
    // A Redis just resumed on a busy machine can still miss the 500 ms once: a client retries a
    // retryable 503 (as the answer says), and the fleet recovers without a restart.
    const persisted = await waitFor('a persist after the resume', async () => {
      const attempt = await answer(post('/v1/workspaces/ws/persist?wait=true', { generation: 1, delete: true, reason: 'turn-end' }));
      return attempt.status === 503 && attempt.body.error.code === 'RedisUnavailable' && attempt.body.error.retryable === true ? undefined : attempt;
    });
    expect(persisted).toMatchObject({ status: 200, body: { result: { workspaceId: 'ws', generation: 1 } } });
  });
});
