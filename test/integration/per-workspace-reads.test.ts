// Reads of many workspaces at once (persist lag, `fleet status`, `/metrics`): one pipeline on a
// single server, one per bucket on a cluster, every reply back in the order asked, in every layout.
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { fleetKeys, type KeyLayout } from '../../src/keys.js';
import { AddressStore } from '../../src/state/address-store.js';
import { RuntimeStore } from '../../src/state/runtime-store.js';
import { PersistIntentStore } from '../../src/state/persist-intent.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConfig, testConnection, uniquePrefix } from '../helpers/fleet-env.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import type { RedisClient } from '../../src/redis.js';

async function readsInOrder(redis: RedisClient, layout: KeyLayout): Promise<void> {
  const keys = fleetKeys(uniquePrefix(), layout);
  const ids = Array.from({ length: 60 }, (_, i) => `pw-${i}`);
  for (const [i, ws] of ids.entries()) {
    if (i % 3 === 0) continue;
    await redis.hset(keys.address(ws), 'publishedAt', String(1_000 + i), 'handle', `h-${i}`, 'generation', '1');
    await redis.hset(keys.runtime(ws), 'state', i % 2 ? 'ready' : 'stopped');
    await redis.hset(keys.persistStatus(ws), 'completedAt', String(2_000 + i), 'capturedAt', String(3_000 + i));
  }
  const published = await new AddressStore(redis, keys).publishedAtOf(ids);
  expect(published).toEqual(ids.map((_, i) => (i % 3 === 0 ? null : 1_000 + i)));
  const states = await new RuntimeStore(redis, keys).statesOf(ids);
  expect(states).toEqual(ids.map((_, i) => (i % 3 === 0 ? null : i % 2 ? 'ready' : 'stopped')));
  const caught = await new PersistIntentStore(redis, keys).caughtUpOf(ids);
  expect(caught).toEqual(ids.map((_, i) => (i % 3 === 0 ? { completedAt: 0, capturedAt: 0 } : { completedAt: 2_000 + i, capturedAt: 3_000 + i })));
  expect(await new AddressStore(redis, keys).publishedAtOf([])).toEqual([]);
}

describe('per-workspace reads', () => {
  it.each(['single-slot', 'sharded'] as const)('one server, %s: every reply in the order asked', async (layout) => {
    const { config } = await testConfig();
    await readsInOrder(testConnection(config), layout);
  });

  it.each(['single-slot', 'sharded'] as const)('a 3-master cluster, %s: every reply in the order asked (sharded: one pipeline per bucket, over every master)', { timeout: 120_000 }, async (layout) => {
    const cluster = await RedisCluster.start(3, 0);
    const client = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })), { redisOptions: { password: cluster.password } });
    addCleanup(() => client.disconnect());
    await readsInOrder(client, layout);
  });
});
