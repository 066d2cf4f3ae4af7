// Bull Board's queues outlive a Redis that refused their handshake: BullMQ keeps the outcome of a
// Queue's first command (its version check, INFO), so a board queue made while Redis refused it
// (paused, failing over; here an ACL that denies INFO, the same failure made deterministic) would
// fail every call after. The board drops such a queue and its next refresh adds it again.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createFleetBoard } from '../../src/http/fleet-board.js';
import { fleetKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { closeRedis, createRedis } from '../../src/redis.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testEnv } from '../helpers/fleet-env.js';
import { RedisServer } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

describe('fleet board', () => {
  it('drops a queue whose handshake Redis refused, and shows it again once Redis answers', async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('board-recovery'), false);
    addCleanup(() => server.stop());
    const admin = new Redis(server.url, { connectionName: 'board-admin' });
    addCleanup(() => admin.disconnect());
    const config = loadConfig(await testEnv({ REDIS_URL: server.url }));
    const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
    const redis = createRedis({ url: server.url, role: 'client', commandTimeoutMs: 1_000, name: 'board-test' });
    addCleanup(() => closeRedis(redis));
    expect(await redis.ping()).toBe('PONG');

    await admin.call('ACL', 'SETUSER', 'default', '-info');
    addCleanup(() => admin.call('ACL', 'SETUSER', 'default', '+info').then(() => undefined));
    const board = await createFleetBoard({ redis, keys, config, logger: createLogger({ level: 'silent' }), refreshMs: 3_600_000 });
    addCleanup(() => board.close());
    await waitFor('every queue whose handshake failed to be dropped', () => (board.queueNames().length === 0 ? true : undefined));

    await admin.call('ACL', 'SETUSER', 'default', '+info');
    await board.refresh();
    expect(board.queueNames()).toContain('provision');
    const answer = await board.app.request('/api/queues');
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    expect(body.queues.map((q) => q.name)).toContain('provision');
    expect(body.queues.find((q) => q.name === 'provision')!.counts).toMatchObject({ waiting: 0, active: 0 });
  });
});
