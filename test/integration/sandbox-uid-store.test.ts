// The sandbox uid store on Redis: one uid per workspace from the range, stable, never shared,
// never reused, allocated atomically even when many workers race.
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { SandboxUidsExhaustedError } from '../../src/errors/sandbox-uids-exhausted-error.js';
import { SandboxUidStore } from '../../src/state/sandbox-uid-store.js';
import { createRedis } from '../../src/redis.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConfig, testConnection } from '../helpers/fleet-env.js';

async function setup(range = { first: 300_000, last: 300_099 }, layout = 'single-slot') {
  const { config } = await testConfig({ FLEET_REDIS_KEY_LAYOUT: layout });
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  const store = (redis = testConnection(config)) => new SandboxUidStore(redis, keys, range);
  return { config, keys, store };
}

describe('SandboxUidStore', () => {
  it('hands out one uid per workspace from the range and keeps it', async () => {
    const { store } = await setup();
    const uids = store();
    const a = await uids.allocate('ws-a');
    const b = await uids.allocate('ws-b');
    expect([a, b]).toEqual([300_000, 300_001]);
    expect(await uids.allocate('ws-a')).toBe(a);
    expect(await uids.get('ws-a')).toBe(a);
    expect(await uids.get('never')).toBeNull();
    expect(await uids.owner(b)).toBe('ws-b');
  });

  it('never gives two racing workspaces the same uid (50 workspaces on 10 connections at once)', async () => {
    const { config, store } = await setup({ first: 400_000, last: 400_049 });
    const connections = Array.from({ length: 10 }, (_, i) => {
      const redis = createRedis({ url: config.redis.url!, role: 'client', commandTimeoutMs: 5_000, name: `uid-race-${i}` });
      addCleanup(() => redis.disconnect());
      return store(redis);
    });
    const workspaces = Array.from({ length: 50 }, (_, i) => `ws-${i}`);
    // Every workspace asked twice, from different connections, all at once.
    const results = await Promise.all([...workspaces, ...workspaces].map((ws, i) => connections[i % 10]!.allocate(ws).then((uid) => [ws, uid] as const)));
    const byWorkspace = new Map<string, Set<number>>();
    for (const [ws, uid] of results) byWorkspace.set(ws, (byWorkspace.get(ws) ?? new Set()).add(uid));
    for (const [ws, set] of byWorkspace) expect(set.size, ws).toBe(1);
    const all = [...byWorkspace.values()].map((set) => [...set][0]!);
    expect(new Set(all).size).toBe(50);
    expect(Math.min(...all)).toBe(400_000);
    expect(Math.max(...all)).toBe(400_049);
  });

  it('refuses when the range is used up, and never reuses a uid (not even for a workspace started over)', async () => {
    const { store } = await setup({ first: 500_000, last: 500_001 });
    const uids = store();
    await uids.allocate('one');
    await uids.allocate('two');
    await expect(uids.allocate('three')).rejects.toBeInstanceOf(SandboxUidsExhaustedError);
    await expect(uids.allocate('three')).rejects.toMatchObject({ code: 'SandboxUidsExhausted', retryable: false });
    expect(await uids.allocate('one')).toBe(500_000);
  });

  it('skips uids owned under an earlier, overlapping range', async () => {
    const { config, keys } = await setup();
    const redis = testConnection(config);
    const narrow = new SandboxUidStore(redis, keys, { first: 600_005, last: 600_006 });
    expect(await narrow.allocate('early')).toBe(600_005);
    const wide = new SandboxUidStore(redis, keys, { first: 600_000, last: 600_009 });
    const got = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((ws) => wide.allocate(ws)));
    expect(got).not.toContain(600_005);
    expect(new Set(got).size).toBe(6);
  });

  it('sharded: each bucket hands out its own share of the range (first + bucket + k * buckets), racing workspaces never share a uid', async () => {
    const range = { first: 500_000, last: 500_000 + 128 * 16 - 1 };
    const { keys, store } = await setup(range, 'sharded');
    expect(keys.buckets).toBe(128);
    const uids = store();
    const workspaces = Array.from({ length: 300 }, (_, i) => `sh-${i}`);
    const results = await Promise.all([...workspaces, ...workspaces].map(async (ws) => [ws, await uids.allocate(ws)] as const));
    const byWorkspace = new Map(results.slice(0, 300));
    for (const [ws, uid] of results) expect(byWorkspace.get(ws), ws).toBe(uid);
    expect(new Set(byWorkspace.values()).size).toBe(300);
    for (const [ws, uid] of byWorkspace) {
      expect((uid - range.first) % 128, ws).toBe(keys.bucket(ws));
      expect(await uids.owner(uid), ws).toBe(ws);
    }
    // A bucket whose share (16 uids) is used up refuses, naming the workspace and its share, while others still allocate.
    const bucket = keys.bucket('sh-0');
    const sameBucket = Array.from({ length: 2_000 }, (_, i) => `fill-${i}`).filter((ws) => keys.bucket(ws) === bucket);
    const taken = [...byWorkspace.keys()].filter((ws) => keys.bucket(ws) === bucket).length;
    for (const ws of sameBucket.slice(0, 16 - taken)) await uids.allocate(ws);
    const refused = await uids.allocate(sameBucket[16 - taken]!).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SandboxUidsExhaustedError);
    expect((refused as Error).message).toContain(`every 128th uid from ${range.first + bucket}, key bucket ${bucket}`);
    const other = Array.from({ length: 2_000 }, (_, i) => `other-${i}`).find((ws) => keys.bucket(ws) !== bucket)!;
    expect(await uids.allocate(other)).toBeGreaterThanOrEqual(range.first);
  });
});
