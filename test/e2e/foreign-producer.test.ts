// G5 through the front door: a real worker process, the `fleet` CLI as the fleet's own producer,
// and a plain BullMQ `Queue` as another app's producer (the README's protocol: queue
// `persist@<host>` under the fleet's prefix, the payload fields, no deduplication, no fixed jobId).
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { loadConfig } from '../../src/config.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';
import { ROOT, runFleet, spawnTracked, cliJson } from '../helpers/processes.js';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { readArchivedTree } from '../helpers/archived.js';
import { waitFor } from '../helpers/wait.js';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'held-persist-worker.mjs');

describe('a persist enqueued by a plain BullMQ producer', () => {
  it('its delete: true, sent while a fleet upload-only persist runs, ends in the current revision', async () => {
    const env = await testEnv();
    const config = loadConfig(env);
    const redis = testConnection(config);
    const p = config.redis.prefix;
    const worker = spawnTracked(process.execPath, [FIXTURE], { env });
    await worker.waitForOutput('ready');

    expect((await runFleet(['provision', 'ws', '--wait'], env)).code).toBe(0);
    const live = livePaths(config.paths.liveRoot, 'ws').root;
    await writeFile(path.join(live, 'a.txt'), 'alpha');
    await writeFile(path.join(live, 'b.txt'), 'beta');
    expect((await runFleet(['persist', 'ws', '--delete', '--wait'], env)).code).toBe(0);
    await rm(path.join(live, 'b.txt'));

    // The fleet's own upload-only persist (a caller's: a checkpoint tick's would take the deletion itself), held mid-run.
    await redis.set(`${p}:test:hold`, '1');
    const ours = await runFleet(['persist', 'ws', '--reason', 'manual', '--json'], env);
    expect(ours.code).toBe(0);
    await waitFor('the upload-only run to hold', async () => ((await redis.llen(`${p}:test:started`)) === 1 ? true : undefined));

    const queue = new Queue(`persist@${config.hostId}`, { connection: redis, prefix: fleetKeys(p, config.redis.keyLayout).queuePrefix(`persist@${config.hostId}`) });
    addCleanup(() => queue.close());
    const foreign = await queue.add('persist', { workspaceId: 'ws', generation: 1, delete: true, reason: 'turn-end', turnId: 'app-turn-3' });
    await waitFor('the foreign job to be active', async () => ((await queue.getJobState(foreign.id!)) === 'active' ? true : undefined));
    await redis.del(`${p}:test:hold`);

    await waitFor('the foreign job to complete', async () => ((await queue.getJobState(foreign.id!)) === 'completed' ? true : undefined));
    expect(await queue.getJobState(cliJson(ours.stdout).jobId)).toBe('completed');
    expect(Object.keys(await readArchivedTree(new ArchiveStore(config.paths.archiveRoot), 'ws'))).toEqual(['a.txt']);
    const history = cliJson((await runFleet(['history', 'ws', '--json'], env)).stdout) as { revisions: { current: boolean; reason: string; turnId: string | null }[] };
    expect(history.revisions.find((r) => r.current)).toMatchObject({ reason: 'turn-end', turnId: 'app-turn-3' });
  });
});
