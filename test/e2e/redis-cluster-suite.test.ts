// The fleet's queues on a real Redis Cluster (3 masters, 3 replicas), in every key layout, as a
// user drives it: a running `fleet up` (its web API, board and workers) and the CLI, with a
// REDIS_URL that points nowhere. One pass covers each queue's work: deduplication (20 concurrent
// HTTP provisions of one workspace: one sandbox), provisioning, persist, a checkpoint tick that
// takes a mid-turn change, a bake that activates a base and a new workspace created from it,
// and GC runs, each through its own queue; the workspace list, the idle and orphan GC kinds and a
// reset, which read the per-bucket indexes of the `sharded` layout. A script that touched two
// slots would fail here with CROSSSLOT.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testEnv } from '../helpers/fleet-env.js';
import { startFleetUp } from '../helpers/fleet-up.js';
import { fleetJson, runFleet } from '../helpers/processes.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';

describe.each(['single-slot', 'per-queue', 'sharded'] as const)('the fleet on a Redis Cluster, %s', (layout) => {
  it('dedup, provision, persist, checkpoint, bake and GC each run through the cluster', { timeout: 300_000 }, async () => {
    const cluster = await RedisCluster.start();
    const env = await testEnv({
      ...cluster.env,
      REDIS_URL: 'redis://:unused@127.0.0.1:1',
      FLEET_REDIS_KEY_LAYOUT: layout,
      FLEET_HTTP_PORT: '0',
      FLEET_CHECKPOINT_INTERVAL_MS: '1000',
      FLEET_GC_SCHEDULE: 'idle=off,orphans=off',
    });
    const up = await startFleetUp(env);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    const ok = fleetJson(env);
    const exec = async (ws: string, script: string) => expect((await runFleet(['exec', ws, '--', 'sh', '-c', script], env)).code).toBe(0);

    // Deduplication: 20 callers at once, one provision job's answer for all of them.
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const response = await fetch(`${web}/v1/workspaces/dedup/provision?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        expect(response.status).toBe(200);
        return ((await response.json()) as { result: { handle: string; generation: number } }).result;
      }),
    );
    expect(new Set(answers.map((a) => `${a.handle}#${a.generation}`))).toEqual(new Set([`${answers[0]!.handle}#1`]));

    // Persist, then a checkpoint tick that takes a mid-turn change.
    await exec('dedup', 'echo turn > turn.txt');
    const turn = await ok<{ result: { revision: string; files: number } }>(['persist', 'dedup', '--delete', '--reason', 'turn-end', '--wait']);
    expect(turn.result.files).toBe(1);
    await exec('dedup', 'echo mid-turn > mid.txt');
    const checkpoint = await waitFor(
      'a checkpoint revision with the mid-turn file',
      async () => {
        const { revisions } = await ok<{ revisions: { revision: string; reason: string; files: number }[] }>(['history', 'dedup']);
        return revisions.find((r) => r.reason === 'checkpoint' && r.files === 2);
      },
      60_000,
      250,
    );
    expect(checkpoint.revision).not.toBe(turn.result.revision);

    // A bake through the bake queue; a new workspace starts from the active base.
    const manifest = path.join(await tempDir('cluster-bake'), 'base.json');
    await writeFile(manifest, JSON.stringify({ schemaVersion: 1, name: 'cluster-base', runtime: 'node22', setup: ['mkdir -p src && echo from-base > src/app.txt'], smoke: ['test -f src/app.txt'] }));
    const baked = await ok<{ snapshotId: string; activated: boolean }>(['bake', manifest, '--activate', '--wait']);
    expect(baked.activated).toBe(true);
    expect(await ok(['provision', 'from-base', '--wait'])).toMatchObject({ generation: 1, outcome: 'created-from-base' });

    // GC through the gc queue (the CLI waits for each kind's job): a dry run and a real run.
    const dry = await ok<{ dryRun: boolean; results: { kind: string }[] }>(['gc', '--kind', 'unattached', '--dry-run']);
    expect(dry).toMatchObject({ dryRun: true, results: [{ kind: 'unattached' }] });
    const ran = await ok<{ dryRun: boolean; results: { kind: string }[] }>(['gc', '--kind', 'litter']);
    expect(ran).toMatchObject({ dryRun: false, results: [{ kind: 'litter' }] });
    for (const kind of ['unattached', 'idle', 'orphans']) {
      expect(await ok<{ dryRun: boolean; results: { kind: string }[] }>(['gc', '--kind', kind]), kind).toMatchObject({ dryRun: false, results: [{ kind }] });
    }

    // The workspace list reads the activity index of every bucket; a reset removes a workspace's records in one script.
    const listed = await ok<{ workspaces: { workspaceId: string }[] }>(['workspace', 'list']);
    expect(listed.workspaces.map((w) => w.workspaceId).sort()).toEqual(['dedup', 'from-base']);
    expect(await ok(['workspace', 'reset', 'from-base', '--confirm'])).toMatchObject({ workspaceId: 'from-base' });
    expect(await ok(['provision', 'from-base', '--wait'])).toMatchObject({ outcome: 'created-from-base' });
    // Its head exists once a persist committed (a checkpoint tick may or may not have yet): take one.
    await ok(['persist', 'from-base', '--delete', '--reason', 'turn-end', '--wait']);
    if (layout === 'sharded') {
      // The state is where the layout puts it: in the workspace's bucket, nothing under the prefix's one tag.
      const client = new Cluster(cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })), { redisOptions: { password: cluster.password } });
      addCleanup(() => client.disconnect());
      const keys = fleetKeys(env.FLEET_PREFIX!, 'sharded');
      const single = fleetKeys(env.FLEET_PREFIX!);
      for (const ws of ['dedup', 'from-base']) {
        expect(await client.exists(keys.address(ws), keys.generation(ws), keys.head(ws)), ws).toBe(3);
        expect(await client.zscore(keys.workspaces(keys.bucket(ws)), ws), ws).not.toBeNull();
        expect(await client.exists(single.address(ws), single.generation(ws)), ws).toBe(0);
      }
      expect(await client.exists(single.workspaces(0))).toBe(0);
      expect(keys.bucket('dedup')).not.toBe(keys.bucket('from-base'));
    }

    // Every queue that ran holds completed jobs, as the status reads them from the cluster.
    const status = await ok<{ byQueue: Record<string, { completed: number; failed: number }> }>(['status']);
    for (const queue of ['provision', 'persist@local', 'checkpoint@local', 'bake', 'gc']) expect(status.byQueue[queue]?.completed, queue).toBeGreaterThanOrEqual(1);
  });
});
