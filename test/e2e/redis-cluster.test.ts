// The fleet on a real Redis Cluster (3 masters, 3 replicas) as a user runs it: `fleet up` and the
// CLI with FLEET_REDIS_CLUSTER_NODES (and a REDIS_URL that points nowhere, so nothing can quietly
// use a single server): a workspace is provisioned, written, persisted, described and listed,
// and its state is in the cluster. With FLEET_REDIS_KEY_LAYOUT=per-queue each queue has its own
// hash tag: the queues spread over the masters, the CLI still finds and serves every one, and a
// failover of the master holding the provision queue during a load loses nothing. With `sharded`
// the workspaces' state spreads over the masters too: a failover of one of their masters during
// a provision load, or during persists, loses nothing and lets no fenced-out write through.
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { runProvisionLoad } from '../../bench/provision-load.js';
import { fleetKeys } from '../../src/keys.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testEnv } from '../helpers/fleet-env.js';
import { startFleetUp } from '../helpers/fleet-up.js';
import { fleetJson, killGroup, runFleet } from '../helpers/processes.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { ManagedProcess } from '../../chaos/fleet-processes.js';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { loadConfig } from '../../src/config.js';
import { createFleetClient } from '../../src/producers/fleet-client.js';
import { LocalProvider } from '../../src/providers/local/local-provider.js';
import type { ProvisionResult } from '../../src/queues/provision.js';
import { archivedNode } from '../helpers/archived.js';
import { fenceViolations } from '../../chaos/fence-violations.js';
import { createRedis } from '../../src/redis.js';
import { AddressStore } from '../../src/state/address-store.js';
import { CheckpointStore } from '../../src/state/checkpoint-store.js';

// 600 provision calls for 120 workspaces from 3 producers against 3 `fleet worker` processes; once
// a tenth are answered, the master holding `slotKey`'s slot is failed over to its replica.
async function failoverDuringLoad(extra: Record<string, string>, slotKey: (env: Record<string, string>) => string): Promise<void> {
  const cluster = await RedisCluster.start();
  const env = await testEnv({ ...cluster.env, REDIS_URL: 'redis://:unused@127.0.0.1:1', FLEET_LOG_LEVEL: 'error', ...extra });
  let failedOver: { from: number; to: number } | null = null;
  let doneWhenPromoted = Number.NaN;
  const result = await runProvisionLoad({
    env,
    requests: 600,
    workspaces: 120,
    producers: 3,
    workers: 3,
    duringLoad: async (completed) => {
      failedOver = await cluster.failoverSlotOf(slotKey(env));
      doneWhenPromoted = completed();
    },
  });
  expect(failedOver).toMatchObject({ from: expect.any(Number), to: expect.any(Number) });
  // Requests were still in flight when the replica took over.
  expect(doneWhenPromoted).toBeLessThan(600);
  expect(result).toMatchObject({ requests: 600, created: 120, duplicates: 0, orphans: 0, inconsistentCallers: 0, failed: 0 });
}

describe('fleet on a Redis Cluster', () => {
  it('fleet up and the CLI use the cluster for every role; a workspace goes round trip', { timeout: 180_000 }, async () => {
    const cluster = await RedisCluster.start();
    const env = await testEnv({ ...cluster.env, REDIS_URL: 'redis://:unused@127.0.0.1:1', FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const up = await startFleetUp(env);
    expect(up.stdout()).toMatch(/redis\s+cluster 127\.0\.0\.1:\d+.*\(cluster\)/);
    const ok = fleetJson(env);
    expect(await ok(['provision', 'ws', '--wait'])).toMatchObject({ generation: 1, outcome: 'created-empty' });
    expect((await runFleet(['exec', 'ws', '--', 'sh', '-c', 'echo on-the-cluster > notes.txt'], env)).code).toBe(0);
    const persisted = await ok<{ result: { revision: string; files: number } }>(['persist', 'ws', '--delete', '--reason', 'turn-end', '--wait']);
    expect(persisted.result.files).toBe(1);
    expect(await ok(['workspace', 'show', 'ws'])).toMatchObject({ currentRevision: persisted.result.revision, runtime: { state: 'ready' } });
    const status = await ok<{ byQueue: Record<string, { completed: number }> }>(['status']);
    expect(status.byQueue['persist@local']?.completed).toBeGreaterThanOrEqual(1);

    // The records are in the cluster, on the node that owns the prefix's slot.
    const client = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })), { redisOptions: { password: cluster.password } });
    addCleanup(() => client.disconnect());
    const keys = fleetKeys(env.FLEET_PREFIX!);
    expect(await client.exists(keys.address('ws'))).toBe(1);
  });

  it("a failover of the master holding the fleet's slot during a provision load: one sandbox per workspace, every caller the same answer", { timeout: 240_000 }, async () => {
    await failoverDuringLoad({}, (env) => env.FLEET_PREFIX!);
  });

  it('per-queue tags: the queues live on different masters, the CLI finds them all, the fleet keys stay in one slot', { timeout: 180_000 }, async () => {
    const cluster = await RedisCluster.start();
    // A fixed prefix: with it the three queues below hash to three different masters (slots 1536, 6016, 13814).
    const env = await testEnv({ ...cluster.env, REDIS_URL: 'redis://:unused@127.0.0.1:1', FLEET_PREFIX: '{fleet}', FLEET_REDIS_KEY_LAYOUT: 'per-queue', FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    await startFleetUp(env);
    const ok = fleetJson(env);
    expect(await ok(['provision', 'ws', '--wait'])).toMatchObject({ generation: 1, outcome: 'created-empty' });
    expect((await runFleet(['exec', 'ws', '--', 'sh', '-c', 'echo per-queue > notes.txt'], env)).code).toBe(0);
    const persisted = await ok<{ result: { files: number } }>(['persist', 'ws', '--delete', '--reason', 'turn-end', '--wait']);
    expect(persisted.result.files).toBe(1);
    const status = await ok<{ byQueue: Record<string, { completed: number }> }>(['status']);
    expect(status.byQueue['provision']?.completed).toBeGreaterThanOrEqual(1);
    expect(status.byQueue['persist@local']?.completed).toBeGreaterThanOrEqual(1);

    const client = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })), { redisOptions: { password: cluster.password } });
    addCleanup(() => client.disconnect());
    const keys = fleetKeys('{fleet}', 'per-queue');
    const owners = new Set<number>();
    for (const queue of ['provision', 'persist@local', 'checkpoint@local']) {
      const idKey = keys.bullQueue(queue, 'id');
      expect(idKey).toBe(`{fleet:${queue}}:${queue}:id`);
      expect(await client.exists(idKey), idKey).toBe(1);
      owners.add(Math.floor(Number(await client.cluster('KEYSLOT', idKey)) / 5461));
    }
    expect(owners.size).toBe(3);
    // Nothing under the single-slot names; the fleet's own keys keep the prefix's one slot.
    expect(await client.exists(fleetKeys('{fleet}').bullQueue('provision', 'id'))).toBe(0);
    expect(await client.exists(keys.address('ws'))).toBe(1);
    // The CLI scans every master for queues holding jobs.
    const jobs = await ok<{ jobs: { queue: string }[] }>(['jobs', 'list', '--state', 'completed']);
    expect(jobs.jobs.map((job) => job.queue)).toEqual(expect.arrayContaining(['provision', 'persist@local']));
  });

  it('per-queue tags: a failover of the master holding the provision queue during a load: one sandbox per workspace', { timeout: 240_000 }, async () => {
    await failoverDuringLoad({ FLEET_REDIS_KEY_LAYOUT: 'per-queue' }, (env) => fleetKeys(env.FLEET_PREFIX!, 'per-queue').queuePrefix('provision'));
  });

  it('sharded: a failover of the master holding a loaded workspace\'s bucket during a load: one sandbox per workspace', { timeout: 240_000 }, async () => {
    await failoverDuringLoad({ FLEET_REDIS_KEY_LAYOUT: 'sharded' }, (env) => fleetKeys(env.FLEET_PREFIX!, 'sharded').generation('load-0'));
  });

  // single-slot: the master of the fleet's one slot; sharded: the master of the first workspace's bucket (the others' buckets spread over all three).
  it.each([
    ['single-slot', (env: Record<string, string>) => env.FLEET_PREFIX!],
    ['sharded', (env: Record<string, string>) => fleetKeys(env.FLEET_PREFIX!, 'sharded').address('fo-0')],
  ] as const)("%s: acknowledged persists survive a failover of the master holding the workspace state: every one is in the archive, 0 fence violations", { timeout: 300_000 }, async (layout, slotKey) => {
    const cluster = await RedisCluster.start();
    const env = await testEnv({ ...cluster.env, REDIS_URL: 'redis://:unused@127.0.0.1:1', FLEET_LOG_LEVEL: 'error', FLEET_CHECKPOINT_INTERVAL_MS: '2000', FLEET_REDIS_KEY_LAYOUT: layout });
    const config = loadConfig(env);
    const processes = ['provision', 'persist', 'checkpoint'].map((queues) => new ManagedProcess({ name: queues, hostId: config.hostId, queues, env }));
    addCleanup(() => Promise.all(processes.map((p) => p.kill('SIGKILL'))).then(() => undefined));
    await Promise.all(processes.map((p) => p.start()));
    const client = createFleetClient({ config });
    addCleanup(() => client.close());
    const local = new LocalProvider({ hostId: config.hostId, liveRoot: config.paths.liveRoot, snapshotRoot: config.paths.snapshotRoot, archiveRoot: config.paths.archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 });
    const archive = new ArchiveStore(config.paths.archiveRoot);
    const ids = Array.from({ length: 12 }, (_, i) => `fo-${i}`);
    const rounds = 6;
    const acked = new Map<string, number>();
    let done = 0;
    let failedOver: Promise<{ from: number; to: number }> | null = null;
    let doneWhenPromoted = Number.NaN;
    // Each workspace: a file per round written into its live tree, then a turn-end persist; a call
    // caught by the failover is tried again (as an app does), only an acknowledgement counts.
    await Promise.all(
      ids.map(async (workspaceId) => {
        for (let round = 1; round <= rounds; round++) {
          for (let attempt = 1; ; attempt++) {
            try {
              const placed = (await client.provision({ workspaceId }, { wait: true, timeoutMs: 60_000 })).result as ProvisionResult;
              await local.writeFiles(placed.handle, [{ path: `round-${round}.txt`, content: Buffer.from(`${workspaceId} ${round}`) }]);
              await client.persist({ workspaceId, generation: placed.generation, delete: true, reason: 'turn-end' }, { wait: true, timeoutMs: 60_000 });
              acked.set(workspaceId, round);
              break;
            } catch (error) {
              if (attempt >= 10) throw error;
            }
          }
          done += 1;
          if (done === Math.floor((ids.length * rounds) / 3)) {
            failedOver = cluster.failoverSlotOf(slotKey(env)).then((moved) => {
              doneWhenPromoted = done;
              return moved;
            });
          }
        }
      }),
    );
    expect(await failedOver).toMatchObject({ from: expect.any(Number), to: expect.any(Number) });
    // Turns were still in flight when the replica took over.
    expect(doneWhenPromoted).toBeLessThan(ids.length * rounds);
    // Every acknowledged round of every workspace is in its current revision.
    for (const workspaceId of ids) {
      expect(acked.get(workspaceId)).toBe(rounds);
      for (let round = 1; round <= rounds; round++) {
        const node = await archivedNode(archive, workspaceId, `round-${round}.txt`);
        expect(node?.type === 'file' ? node.content.toString() : null, `${workspaceId} round ${round}`).toBe(`${workspaceId} ${round}`);
      }
    }
    // One sandbox per workspace, the addressed one.
    const sandboxes = await local.list();
    expect(sandboxes.map((sandbox) => sandbox.workspaceId).sort()).toEqual([...ids].sort());
    // 0 fence violations: no attached revision of a replaced generation after a newer one, no current revision ahead of the address.
    const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: 10_000 });
    addCleanup(() => redis.disconnect());
    const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
    const fence = { checkpoints: new CheckpointStore(redis, keys), addresses: new AddressStore(redis, keys), archive };
    const violations = (await Promise.all(ids.map((ws) => fenceViolations(fence, ws)))).flat();
    expect(violations).toEqual([]);
    // Every workspace has an attached head in Redis (the fence check above had something to check).
    for (const ws of ids) expect((await fence.checkpoints.attachedIds(ws)).length, ws).toBeGreaterThanOrEqual(rounds);
  });

  it('fleet redis migrate-keys on the cluster: single-slot → sharded moves every workspace onto its bucket\'s master, and the fleet carries on', { timeout: 240_000 }, async () => {
    const cluster = await RedisCluster.start();
    // A fixed prefix: the four workspaces' buckets (28, 47, 66, 85) hash to slots 4858, 2483, 16368 and 11420, on two different masters.
    const env = await testEnv({ ...cluster.env, REDIS_URL: 'redis://:unused@127.0.0.1:1', FLEET_PREFIX: '{fleet}', FLEET_REDIS_KEY_LAYOUT: 'single-slot', FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const ids = ['mc-0', 'mc-1', 'mc-2', 'mc-3'];
    const up = await startFleetUp(env);
    const ok = fleetJson(env);
    const revisions = new Map<string, string>();
    for (const ws of ids) {
      await ok(['provision', ws, '--wait']);
      expect((await runFleet(['exec', ws, '--', 'sh', '-c', `echo ${ws} > notes.txt`], env)).code).toBe(0);
      revisions.set(ws, (await ok<{ result: { revision: string } }>(['persist', ws, '--delete', '--reason', 'turn-end', '--wait'])).result.revision);
    }
    killGroup(up.child, 'SIGTERM');
    await up.exited;

    const sharded = { ...env, FLEET_REDIS_KEY_LAYOUT: 'sharded' };
    const moved = await fleetJson(sharded)<{ workspaces: number; keysMoved: number; conflicts: unknown[] }>(['redis', 'migrate-keys', '--from', 'single-slot']);
    expect(moved).toMatchObject({ workspaces: ids.length, conflicts: [] });
    expect(moved.keysMoved).toBeGreaterThanOrEqual(ids.length * 6);
    // Every workspace's state now sits in its bucket's slot (on whichever master owns it); nothing under the old tag.
    const client = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })), { redisOptions: { password: cluster.password } });
    addCleanup(() => client.disconnect());
    const keys = fleetKeys(env.FLEET_PREFIX!, 'sharded');
    const single = fleetKeys(env.FLEET_PREFIX!, 'single-slot');
    const masters = new Set<string>();
    for (const ws of ids) {
      expect(await client.get(keys.generation(ws)), ws).toBe('1');
      expect(await client.exists(single.generation(ws), single.address(ws)), ws).toBe(0);
      const slot = Number(await client.cluster('KEYSLOT', keys.generation(ws)));
      masters.add(String(client.slots[slot]?.[0]));
    }
    expect(masters.size).toBeGreaterThan(1);

    await startFleetUp(sharded);
    const after = fleetJson(sharded);
    for (const ws of ids) {
      const { revisions: history } = await after<{ revisions: { revision: string }[] }>(['history', ws]);
      expect(history.map((r) => r.revision), ws).toContain(revisions.get(ws));
      expect((await after<{ generation: number }>(['provision', ws, '--wait'])).generation, ws).toBeGreaterThanOrEqual(1);
      expect((await runFleet(['files', 'get', ws, 'notes.txt'], sharded)).stdout.trim(), ws).toBe(ws);
    }
  });
});
