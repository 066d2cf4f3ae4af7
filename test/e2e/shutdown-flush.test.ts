// A graceful stop of `fleet up` (SIGTERM, as a rolling restart sends it) with checkpoints ticking
// every second: every workspace's last change is persisted before the process exits, and no persist is left waiting in the host's queue for a fleet that is gone. A tick
// after the flush used to enqueue one that nobody served (found by `fleet redis migrate-keys`,
// which refuses while a queue holds work).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testConfig, testConnection } from '../helpers/fleet-env.js';
import { startFleetUp } from '../helpers/fleet-up.js';
import { fleetJson, killGroup, runFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

interface HistoryRow {
  revision: string;
  reason: string;
  current: boolean;
}

describe('graceful stop (fleet up, local provider)', () => {
  it('SIGTERM with checkpoints ticking: each last change is flushed and no persist is left in the queue', { timeout: 240_000 }, async () => {
    const { config, env } = await testConfig({ FLEET_CHECKPOINT_INTERVAL_MS: '1000', FLEET_SHUTDOWN_FLUSH_MS: '60000', FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const redis = testConnection(config);
    addCleanup(() => redis.disconnect());
    const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
    const ok = fleetJson(env);
    const ids = ['stop-a', 'stop-b', 'stop-c', 'stop-d'];
    const up = await startFleetUp(env);
    for (const ws of ids) await ok(['provision', ws, '--wait']);
    // A first tree for the checkpoints to take.
    for (const ws of ids) {
      const dir = path.join(config.paths.liveRoot, ws, 'root', 'src');
      await mkdir(dir, { recursive: true });
      for (let i = 0; i < 300; i++) await writeFile(path.join(dir, `f${i}.txt`), `${ws} ${i}\n`);
    }
    // Checkpoints run: every workspace has a checkpoint revision.
    await waitFor(
      'a checkpoint of every workspace',
      async () => {
        for (const ws of ids) {
          const { revisions } = await ok<{ revisions: HistoryRow[] }>(['history', ws]);
          if (!revisions.some((r) => r.reason === 'checkpoint')) return undefined;
        }
        return true;
      },
      120_000,
    );
    // The last change of each workspace, then the stop.
    for (const ws of ids) {
      const dir = path.join(config.paths.liveRoot, ws, 'root', 'src');
      for (let i = 0; i < 300; i++) await writeFile(path.join(dir, `f${i}.txt`), `${ws} ${i} last\n`);
      // Enough new files that the flush's persists take a while: ticks fall due during them.
      await mkdir(path.join(dir, 'more'));
      for (let i = 0; i < 4_000; i++) await writeFile(path.join(dir, 'more', `m${i}.txt`), `${ws} ${i}\n`);
    }
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);

    // Nothing waits in the host's persist queue: no job to run, none retrying, none running.
    const bullName = `persist@${config.hostId}`;
    const queue = new Queue(bullName, { connection: redis, prefix: keys.queuePrefix(bullName) });
    addCleanup(() => queue.close());
    const counts = await queue.getJobCounts('wait', 'active', 'prioritized', 'waiting-children', 'delayed');
    expect(counts).toEqual({ wait: 0, active: 0, prioritized: 0, 'waiting-children': 0, delayed: 0 });

    // Each workspace's current revision holds the last change (the flush's, or a checkpoint that took it first).
    for (const ws of ids) {
      const { revisions } = await ok<{ revisions: HistoryRow[] }>(['history', ws]);
      const current = revisions.find((r) => r.current);
      expect(current, ws).toBeDefined();
      const read = await runFleet(['files', 'get', ws, 'src/f299.txt', '--revision', current!.revision], env);
      expect({ code: read.code, stdout: read.stdout }, ws).toEqual({ code: 0, stdout: `${ws} 299 last\n` });
    }
  });
});
