// The sandbox uid store on Redis: one uid per workspace from the range, stable, never shared,
// never reused, allocated atomically even when many workers race.
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { SandboxUidsExhaustedError } from '../../src/errors/sandbox-uids-exhausted-error.js';
import { SandboxUidStore } from '../../src/state/sandbox-uid-store.js';
import { createRedis } from '../../src/redis.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConfig, testConnection } from '../helpers/fleet-env.js';

async function setup(range = { first: 300_000, last: 300_099 }) {
  const { config } = await testConfig();
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
});
