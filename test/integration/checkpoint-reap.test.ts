// Checkpoints (one scheduler per workspace, never overlapping a persist, nothing recorded when
// nothing changed), idle reap, shutdown flush and persist lag, with real workers and rsync.
import { describe, expect, it } from 'vitest';
import { persistProcessor } from '../../src/workers/processors/persist.js';
import { persistProcessorDeps } from '../../src/app/build-processors.js';
import { readFleetStatus } from '../../src/status/fleet-status.js';
import type { Processor } from '../../src/jobs/processor-context.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { waitFor } from '../helpers/wait.js';
import { archivedText } from '../helpers/archived.js';

describe('checkpoints', () => {
  it('startCheckpoints upserts one scheduler per workspace; stopCheckpoints removes it', async () => {
    const h = await createHarness();
    await h.provision('ws');
    const queue = h.services.client.pool.queue(`checkpoint@${h.config.hostId}`);
    await h.services.client.startCheckpoints('ws');
    await h.services.client.startCheckpoints('ws');
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers.map((s) => s.key)).toEqual(['checkpoint:ws']);
    expect(schedulers[0]!.every).toBe(h.config.checkpointIntervalMs);
    expect(await h.services.client.stopCheckpoints('ws')).toBe(true);
    expect(await queue.getJobSchedulers()).toEqual([]);
    expect(await h.services.client.stopCheckpoints('ws')).toBe(false);
  });

  it('a warm reuse leaves a current scheduler alone: no job re-added, no extra tick', async () => {
    // An hour's interval: the only ticks are the scheduler's first one and any a reuse sets off.
    const h = await createHarness({ FLEET_CHECKPOINT_INTERVAL_MS: '3600000' });
    let ticks = 0;
    const counting: Processor = async () => {
      ticks += 1;
      return { skipped: 'stopped' };
    };
    await testWorkers(h.config, ['checkpoint'], { checkpoint: counting });
    const queue = h.services.client.pool.queue(`checkpoint@${h.config.hostId}`);
    const settled = async () => {
      const counts = await queue.getJobCounts('waiting', 'active', 'prioritized');
      return Object.values(counts).every((n) => n === 0) ? true : undefined;
    };
    await h.provision('ws');
    // A new `every` scheduler fires at once.
    await waitFor('the first tick', () => (ticks === 1 ? true : undefined));
    await waitFor('no checkpoint job waiting or running', settled);
    // Every job BullMQ adds takes a number from the queue's counter: an upsert re-adds the next job.
    const counter = () => h.services.redis.get(h.services.keys.bullQueue(`checkpoint@${h.config.hostId}`, 'id'));
    const before = await counter();
    for (let i = 0; i < 3; i++) {
      expect((await h.provision('ws')).outcome).toBe('reused');
      await waitFor('no checkpoint job waiting or running', settled);
    }
    expect(await counter()).toBe(before);
    expect(ticks).toBe(1);
    // Another interval (or generation) is upserted.
    await h.services.client.startCheckpoints('ws', { everyMs: 45_000 });
    expect((await queue.getJobScheduler('checkpoint:ws'))!.every).toBe(45_000);
  });

  it('a scheduler that lost its next job is repaired by the next start', async () => {
    const h = await createHarness();
    await h.provision('ws');
    const bull = `checkpoint@${h.config.hostId}`;
    const queue = h.services.client.pool.queue(bull);
    const jobIds = async () => (await queue.getJobs(['waiting', 'delayed', 'prioritized'])).map((job) => job.id);
    // Redis lost the job (BullMQ's API refuses to remove a scheduler's job).
    const lost = (await jobIds())[0]!;
    const { redis, keys } = h.services;
    await redis.zrem(keys.bullQueue(bull, 'delayed'), lost);
    await redis.lrem(keys.bullQueue(bull, 'wait'), 0, lost);
    await redis.zrem(keys.bullQueue(bull, 'prioritized'), lost);
    await redis.del(keys.bullQueue(bull, lost));
    expect(await jobIds()).toEqual([]);
    expect(await queue.getJobScheduler('checkpoint:ws')).toBeDefined();
    await h.services.client.startCheckpoints('ws');
    expect(await jobIds()).toHaveLength(1);
  });

  it('checkpoint ticks coalesce with persists (never two runs at once) and record nothing when nothing changed', async () => {
    const h = await createHarness({ FLEET_CHECKPOINT_INTERVAL_MS: '1000' });
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'one' });
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const real = persistProcessor(persistProcessorDeps(h.services)) as Processor;
    const counting: Processor = async (payload, ctx) => {
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      try {
        return await real(payload, ctx);
      } finally {
        running -= 1;
        runs += 1;
      }
    };
    await testWorkers(h.config, ['persist', 'checkpoint'], { persist: counting });
    const address = (await h.services.addresses.get('ws'))!;
    // Turn-end persists racing the 1 s checkpoint ticks.
    for (let i = 0; i < 5; i++) {
      await h.write('ws', { [`turn${i}.txt`]: `turn ${i}` });
      await h.services.client.persist({ workspaceId: 'ws', generation: address.generation, delete: true, reason: 'turn-end', turnId: `t${i}` }, { wait: true, timeoutMs: 30_000 });
    }
    const checkpointQueue = h.services.client.pool.queue(`checkpoint@${h.config.hostId}`);
    const ticksBefore = (await checkpointQueue.getJobCounts('completed')).completed ?? 0;
    const revisions = (await h.services.archive.revisions('ws')).length;
    // Two more ticks with no changes.
    await waitFor('two idle checkpoint ticks', async () => (((await checkpointQueue.getJobCounts('completed')).completed ?? 0) >= ticksBefore + 2 ? true : undefined), 30_000);
    await waitFor('their persists to finish', async () => {
      const intent = await h.services.intents.read('ws');
      return intent === null && running === 0 ? true : undefined;
    });
    expect(maxRunning).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(5);
    expect((await h.services.archive.revisions('ws')).length).toBe(revisions);
    // The idle ticks did run a persist each (upload-only), and it found nothing to record.
    const ticks = (await checkpointQueue.getCompleted(0, 100)).map((job) => job.returnvalue as { persistJobId?: string; skipped?: string });
    expect(ticks.filter((tick) => tick.persistJobId !== undefined).length).toBeGreaterThanOrEqual(ticksBefore + 2);
    expect((await h.services.intents.status('ws')).result).toMatchObject({ unchanged: true, revision: (await h.services.checkpoints.current('ws'))?.workspaceRevision });
    expect(await archivedText(h.services.archive, 'ws', 'turn4.txt')).toBe('turn 4');
  });
});

describe('idle reap and shutdown flush', () => {
  it('an idle workspace is flushed (reconcile), stopped, its checkpoints stopped; provisioning resumes it', async () => {
    const h = await createHarness({ FLEET_IDLE_TTL_MS: '60000' });
    await h.provision('ws');
    await h.write('ws', { 'work.txt': 'unsaved work' });
    await testWorkers(h.config, ['persist', 'gc']);
    // Backdate the last activity instead of waiting for the TTL.
    await h.services.redis.zadd(h.services.keys.workspaces(h.services.keys.bucket('ws')), Date.now() - 120_000, 'ws');
    const dry = await h.services.client.gc({ kind: 'idle', dryRun: true }, { wait: true, timeoutMs: 30_000 });
    expect(dry.result).toMatchObject({ kind: 'idle', dryRun: true, count: 1 });
    await h.services.client.gc({ kind: 'idle' }, { wait: true, timeoutMs: 30_000 });
    const address = (await h.services.addresses.get('ws'))!;
    await waitFor('the sandbox to stop', async () => ((await h.services.providerFor(address).get(address.handle, AbortSignal.timeout(5_000)))?.state === 'stopped' ? true : undefined));
    expect(await archivedText(h.services.archive, 'ws', 'work.txt')).toBe('unsaved work');
    const head = await h.services.checkpoints.current('ws');
    expect(head?.reason).toBe('idle-reap');
    expect(await h.services.client.pool.queue(`checkpoint@${h.config.hostId}`).getJobSchedulers()).toEqual([]);
    expect((await readFleetStatus(h.services.redis, h.services.keys, h.config)).activeWorkspaces).toBe(0);
    const again = await h.provision('ws');
    expect(again).toMatchObject({ outcome: 'resumed', generation: address.generation });
  });

  it('a stopping worker flushes the workspaces it holds (reason shutdown)', async () => {
    const h = await createHarness({ FLEET_SHUTDOWN_FLUSH_MS: '20000' });
    await h.provision('ws');
    await h.write('ws', { 'late.txt': 'written just before shutdown' });
    const fleet = await testWorkers(h.config, ['persist']);
    await fleet.close();
    expect(await archivedText(h.services.archive, 'ws', 'late.txt')).toBe('written just before shutdown');
    expect((await h.services.checkpoints.current('ws'))?.reason).toBe('shutdown');
  });

  it('status reports the maximum persist lag of active workspaces and fence rejections', async () => {
    const h = await createHarness();
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    const now = Date.now();
    await h.services.redis.hset(h.services.keys.address('ws'), 'publishedAt', String(now - 60_000));
    await h.services.redis.hset(h.services.keys.persistStatus('ws'), 'completedAt', String(now - 50_000));
    const before = await readFleetStatus(h.services.redis, h.services.keys, h.config);
    expect(before.maxPersistLagMs).toBeGreaterThanOrEqual(50_000);
    expect(before.activeWorkspaces).toBe(1);
    await testWorkers(h.config, ['persist']);
    const address = (await h.services.addresses.get('ws'))!;
    await h.services.client.persist({ workspaceId: 'ws', generation: address.generation }, { wait: true, timeoutMs: 30_000 });
    await h.services.client.persist({ workspaceId: 'ws', generation: address.generation + 5 }).then(() => undefined);
    // The lag counts from when the run began reading the live tree, not from its completion:
    // exactly the time from its start to the moment of the read.
    const status = await h.services.intents.status('ws');
    const readFrom = Date.now();
    const after = await readFleetStatus(h.services.redis, h.services.keys, h.config);
    const readTo = Date.now();
    expect(after.maxPersistLagMs).toBeGreaterThanOrEqual(readFrom - status.capturedAt);
    expect(after.maxPersistLagMs).toBeLessThanOrEqual(readTo - status.capturedAt);
    expect(status.capturedAt).toBeGreaterThan(now - 50_000);
    expect(status.capturedAt).toBeLessThanOrEqual(status.completedAt);
    await waitFor('the stale persist to be fenced', async () => ((await readFleetStatus(h.services.redis, h.services.keys, h.config)).fenceRejections === 1 ? true : undefined));
  });
});
