// Redis restarted (AOF on) in the middle of a provisioning load: every accepted provision reaches
// a terminal state, none is duplicated, and each workspace ends with exactly one sandbox.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createFleetClient } from '../../src/producers/fleet-client.js';
import { LocalProvider } from '../../src/providers/local/local-provider.js';
import { AddressStore } from '../../src/state/address-store.js';
import { fleetKeys } from '../../src/keys.js';
import { createRedis } from '../../src/redis.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testEnv } from '../helpers/fleet-env.js';
import { killGroup, startFleet } from '../helpers/processes.js';
import { RedisServer } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

describe('Redis restart under load', () => {
  it('every accepted provision is terminal, none duplicated', { timeout: 180_000 }, async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('aof-redis'), true);
    addCleanup(() => server.stop('SIGKILL'));
    const env = await testEnv({ REDIS_URL: server.url, FLEET_LOG_LEVEL: 'error', FLEET_REDIS_COMMAND_TIMEOUT_MS: '1000' });
    const config = loadConfig(env);
    const workers = [startFleet(['worker', '--queues', 'provision'], env), startFleet(['worker', '--queues', 'provision'], env)];
    await Promise.all(workers.map((w) => w.waitForOutput('serving')));
    const client = createFleetClient({ config });
    addCleanup(() => client.close());
    const accepted: string[] = [];
    const add = async (i: number) => {
      try {
        accepted.push((await client.provision({ workspaceId: `rr-${i % 60}` })).jobId);
      } catch {
        // refused while Redis is down: not accepted, nothing promised
      }
    };
    await Promise.all(Array.from({ length: 150 }, (_, i) => add(i)));
    const queue = client.pool.queue('provision');
    await waitFor('some provisions to complete', async () => (((await queue.getJobCounts('completed')).completed ?? 0) >= 20 ? true : undefined));
    await server.stop('SIGTERM');
    await server.start();
    await Promise.all(Array.from({ length: 150 }, (_, i) => add(150 + i)));
    const states = await waitFor(
      'every accepted job to be terminal',
      async () => {
        const all = await Promise.all([...new Set(accepted)].map(async (id) => (await queue.getJob(id))?.getState() ?? 'missing'));
        return all.every((s) => s === 'completed' || s === 'failed') ? all : undefined;
      },
      120_000,
      200,
    );
    expect(states.length).toBeGreaterThan(0);
    const failed = await queue.getFailed();
    for (const job of failed) expect(job.failedReason).toMatch(/^[A-Z][A-Za-z]+: /);

    const redis = createRedis({ url: server.url, role: 'client', commandTimeoutMs: 2_000, name: 'rr-check' });
    addCleanup(() => redis.disconnect());
    const addresses = new AddressStore(redis, fleetKeys(config.redis.prefix, config.redis.keyLayout));
    const local = new LocalProvider({ hostId: config.hostId, liveRoot: config.paths.liveRoot, snapshotRoot: config.paths.snapshotRoot, archiveRoot: config.paths.archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 });
    const sandboxes = await local.list();
    const perWorkspace = new Map<string, number>();
    for (const s of sandboxes) perWorkspace.set(s.workspaceId, (perWorkspace.get(s.workspaceId) ?? 0) + 1);
    expect([...perWorkspace.values()].every((n) => n === 1)).toBe(true);
    for (const sandbox of sandboxes) expect((await addresses.get(sandbox.workspaceId))?.handle).toBe(sandbox.handle);
    // A generation consumed by an attempt that died with Redis is not a duplicate: what counts is
    // one live sandbox per workspace, published, and no orphans.
    expect(sandboxes.length).toBe(perWorkspace.size);
    for (const w of workers) killGroup(w.child, 'SIGTERM');
  });
});
