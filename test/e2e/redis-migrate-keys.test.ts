// `fleet redis migrate-keys` as an operator runs it: a fleet with workspaces, persists, checkpoints
// and a uid each runs under the single-slot layout and is stopped; the keys are migrated to
// `sharded` (a dry run first), the fleet starts again under `sharded` and every workspace is
// there: its generation (the fence) carried over, its history, its files, its uid. The command
// refuses while a fleet process runs, and a second run (as after an interruption) moves nothing.
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { scanKeys } from '../../src/state/scan-keys.js';
import { testConfig } from '../helpers/fleet-env.js';
import { startFleetUp } from '../helpers/fleet-up.js';
import { fleetJson, killGroup, runFleet } from '../helpers/processes.js';
import { testConnection } from '../helpers/fleet-env.js';
import { addCleanup } from '../helpers/cleanup.js';

interface Migrated {
  from: string;
  to: string;
  dryRun: boolean;
  workspaces: number;
  keysMoved: number;
  indexEntriesMoved: number;
  conflicts: unknown[];
  unplaced: { index: string; entry: string }[];
}

describe('fleet redis migrate-keys', () => {
  it('single-slot → sharded with the fleet stopped: every workspace comes back whole under the new layout', { timeout: 240_000 }, async () => {
    const { config, env } = await testConfig({ FLEET_REDIS_KEY_LAYOUT: 'single-slot', FLEET_HTTP_PORT: '0', FLEET_CHECKPOINT_INTERVAL_MS: '1000', FLEET_SHUTDOWN_FLUSH_MS: '10000', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const redis = testConnection(config);
    addCleanup(() => redis.disconnect());
    const single = fleetKeys(config.redis.prefix, 'single-slot');
    const sharded = fleetKeys(config.redis.prefix, 'sharded');
    const ok = fleetJson(env);
    const ids = ['mig-a', 'mig-b', 'mig-c'];

    const up = await startFleetUp(env);
    const before = new Map<string, { generation: number; revisions: string[] }>();
    for (const ws of ids) {
      const placed = await ok<{ generation: number }>(['provision', ws, '--wait']);
      expect((await runFleet(['exec', ws, '--', 'sh', '-c', `echo ${ws} > notes.txt`], env)).code).toBe(0);
      await ok(['persist', ws, '--delete', '--reason', 'turn-end', '--wait']);
      const { revisions } = await ok<{ revisions: { revision: string }[] }>(['history', ws]);
      before.set(ws, { generation: placed.generation, revisions: revisions.map((r) => r.revision) });
    }
    // A second generation for one workspace, so the fence has something to keep.
    await ok(['workspace', 'reset', 'mig-c', '--confirm']);
    const again = await ok<{ generation: number }>(['provision', 'mig-c', '--wait']);
    expect(again.generation).toBeGreaterThan(1);
    before.set('mig-c', { generation: again.generation, revisions: [] });
    const uids = await Promise.all(ids.map(async (ws) => redis.get(single.sandboxUid(ws))));
    // A hostile entry in an index: named in the report, left where it is, nothing else disturbed.
    await redis.zadd(single.workspaces(0), Date.now(), '../etc');

    // Refused while the fleet runs: nothing moves.
    const refused = await runFleet(['redis', 'migrate-keys', '--from', 'single-slot'], { ...env, FLEET_REDIS_KEY_LAYOUT: 'sharded' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/still heartbeat/);
    expect(await redis.exists(single.address('mig-a'))).toBe(1);

    killGroup(up.child, 'SIGTERM');
    await up.exited;
    const shardedEnv = { ...env, FLEET_REDIS_KEY_LAYOUT: 'sharded' };
    const migrate = (extra: string[]) => fleetJson(shardedEnv)<Migrated>(['redis', 'migrate-keys', '--from', 'single-slot', ...extra]);

    const dry = await migrate(['--dry-run']);
    expect(dry).toMatchObject({ from: 'single-slot', to: 'sharded', dryRun: true, workspaces: 3, conflicts: [] });
    expect(dry.keysMoved).toBeGreaterThanOrEqual(3 * 6);
    expect(await redis.exists(single.address('mig-a'), sharded.address('mig-a'))).toBe(1);
    expect(await redis.get(single.generation('mig-c'))).toBe(String(before.get('mig-c')!.generation));

    const real = await migrate([]);
    expect(real).toMatchObject({ dryRun: false, workspaces: 3, keysMoved: dry.keysMoved, indexEntriesMoved: dry.indexEntriesMoved, conflicts: [] });
    expect(real.unplaced).toEqual([{ index: single.workspaces(0), entry: '../etc' }]);
    // Nothing of a workspace is left under the old names; everything is in its bucket.
    const leftOver: string[] = [];
    await scanKeys(redis, single.workspaceKeyPattern(), (key) => leftOver.push(key));
    expect(leftOver).toEqual([]);
    for (const [i, ws] of ids.entries()) {
      expect(await redis.get(sharded.generation(ws)), ws).toBe(String(before.get(ws)!.generation));
      expect(await redis.get(sharded.sandboxUid(ws)), ws).toBe(uids[i]);
      expect(await redis.zscore(sharded.workspaces(sharded.bucket(ws)), ws), ws).not.toBeNull();
    }
    // Run again (as after an interruption): nothing left to move.
    expect(await migrate([])).toMatchObject({ keysMoved: 0, indexEntriesMoved: 0, conflicts: [] });

    // The fleet under the new layout: every workspace known, its generation kept, its history and files there.
    await startFleetUp(shardedEnv);
    const okSharded = fleetJson(shardedEnv);
    const listed = await okSharded<{ workspaces: { workspaceId: string; generation: number }[] }>(['workspace', 'list']);
    expect(Object.fromEntries(listed.workspaces.map((w) => [w.workspaceId, w.generation]))).toEqual(Object.fromEntries(ids.map((ws) => [ws, before.get(ws)!.generation])));
    for (const ws of ['mig-a', 'mig-b']) {
      const { revisions } = await okSharded<{ revisions: { revision: string }[] }>(['history', ws]);
      expect(revisions.map((r) => r.revision), ws).toEqual(before.get(ws)!.revisions);
      const placed = await okSharded<{ generation: number }>(['provision', ws, '--wait']);
      expect(placed.generation, ws).toBeGreaterThanOrEqual(before.get(ws)!.generation);
      const read = await runFleet(['files', 'get', ws, 'notes.txt'], shardedEnv);
      expect(read.stdout.trim(), ws).toBe(ws);
    }
    // A new workspace gets a uid of its bucket's share, never one of the migrated ones.
    await okSharded(['provision', 'mig-new', '--wait']);
    const fresh = await redis.get(sharded.sandboxUid('mig-new'));
    expect(fresh).not.toBeNull();
    expect(uids).not.toContain(fresh);
    expect((Number(fresh) - config.sandbox.uidRange.first) % sharded.buckets).toBe(sharded.bucket('mig-new'));
  });
});
