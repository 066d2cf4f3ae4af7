// /metrics after real work: a provision, a persist and a rollback (its restore runs real rsync)
// through real workers, a fenced stale persist, and lock contention and loss, all read back
// fleet-wide from Redis.
import { execFileSync } from 'node:child_process';
import { readFileSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTILE_FIXTURE } from '../helpers/hostile-tree.js';
import { ROOT } from '../helpers/processes.js';
import { Queue } from 'bullmq';
import { FLEET_VERSION } from '../../src/version.js';
import { SingleFlight } from '../../src/locks/single-flight.js';
import { lockMetricsObserver } from '../../src/metrics/lock-metrics-observer.js';
import { testWorkers, silentLogger } from '../helpers/fleet-harness.js';
import { parsePrometheus, sampleValue, type Sample } from '../helpers/prometheus-text.js';
import { waitFor } from '../helpers/wait.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';
import { rejectsWith } from '../helpers/workspace-harness.js';

describe('/metrics', () => {
  it('exposes every fleet metric family with real values after a real persist', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    expect((await answer(h.request('/v1/workspaces/ws-m/provision?wait=true', { json: {} }))).status).toBe(200);
    await h.write('ws-m', { 'a.txt': 'x'.repeat(1000), 'b.txt': 'y'.repeat(500) });
    // A socket in the tree: never archived, counted as skipped.
    execFileSync('python3', [HOSTILE_FIXTURE, 'socket', path.join(h.live('ws-m'), 'agent.sock')]);
    const persisted = await answer(h.request('/v1/workspaces/ws-m/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end' } }));
    expect(persisted.body.result).toMatchObject({ files: 2, bytes: 1500, unchanged: false, skippedEntries: 1 });
    const revision = (persisted.body.result as { revision: string }).revision;
    await h.services.client.rollback({ workspaceId: 'ws-m', revision }, { wait: true, timeoutMs: 30_000 });

    // A persist of a replaced incarnation: the worker's fence refuses it (and counts it).
    await rejectsWith(h.services.client.persist({ workspaceId: 'ws-m', generation: 0 + 99, reason: 'manual' }, { wait: true, timeoutMs: 30_000 }), 'StaleGeneration');

    // Lock contention and a lost hold, observed through the same observer the services use.
    const locks = new SingleFlight(h.services.redis, h.services.keys, silentLogger(), { retryCount: 0, maxHoldMs: 200 }, lockMetricsObserver(h.services.metrics));
    await locks.using('bake:contended', async () => {
      await rejectsWith(locks.using('bake:contended', async () => undefined), 'LockUnavailable');
    });
    await locks.using('bake:held-too-long', (lock) => new Promise<void>((resolve) => lock.signal.addEventListener('abort', () => resolve(), { once: true })));

    // A gc job that has waited a minute (no gc worker runs here): the oldest-waiting gauge shows it.
    const gc = new Queue('gc', { connection: h.services.redis, prefix: h.services.keys.queuePrefix('gc') });
    await gc.add('gc', { kind: 'litter', dryRun: true }, { jobId: 'waits-a-minute', timestamp: Date.now() - 60_000 });
    await gc.close();

    const read = async () => {
      const response = await h.request('/metrics');
      expect(response.headers.get('content-type')).toContain('text/plain');
      return parsePrometheus(await response.text());
    };
    const has = (samples: Sample[], name: string, labels: Record<string, string>, atLeast = 1) => (sampleValue(samples, name, labels) ?? 0) >= atLeast;
    const { samples, types } = await waitFor('every metric family to have values', async () => {
      const scraped = await read();
      const s = scraped.samples;
      const ready =
        has(s, 'fleet_jobs_total', { queue: 'persist@local', outcome: 'completed' }) &&
        has(s, 'fleet_jobs_total', { queue: 'persist@local', outcome: 'failed' }) &&
        has(s, 'fleet_provider_calls_total', { provider: 'local', operation: 'create', outcome: 'ok' }) &&
        has(s, 'fleet_lock_failures_total', { kind: 'bake', reason: 'lost' }) &&
        has(s, 'fleet_lock_contentions_total', { kind: 'bake' });
      return ready ? scraped : undefined;
    });

    // Queue depths by state, per BullMQ queue (host-bound queues carry the host).
    expect(sampleValue(samples, 'fleet_queue_jobs', { queue: 'persist@local', state: 'completed' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'fleet_queue_jobs', { queue: 'persist@local', state: 'failed' })).toBe(1);
    expect(sampleValue(samples, 'fleet_queue_jobs', { queue: 'provision', state: 'completed' })).toBe(1);
    expect(sampleValue(samples, 'fleet_queue_jobs', { queue: 'checkpoint@local', state: 'waiting' })).toBeDefined();
    // Job outcomes and durations by queue.
    expect(types.get('fleet_job_duration_seconds')).toBe('histogram');
    expect(sampleValue(samples, 'fleet_jobs_total', { queue: 'provision', outcome: 'completed' })).toBe(1);
    expect(sampleValue(samples, 'fleet_job_duration_seconds_count', { queue: 'provision', outcome: 'completed' })).toBe(1);
    expect(sampleValue(samples, 'fleet_job_duration_seconds_bucket', { queue: 'provision', outcome: 'completed', le: '+Inf' })).toBe(1);
    expect(sampleValue(samples, 'fleet_job_duration_seconds_sum', { queue: 'provision', outcome: 'completed' })).toBeGreaterThan(0);
    expect(sampleValue(samples, 'fleet_jobs_total', { queue: 'persist@local', outcome: 'failed' })).toBe(1);
    // Persist lag: current max and the histogram of lags closed by persists.
    expect(types.get('fleet_persist_lag_seconds')).toBe('histogram');
    expect(sampleValue(samples, 'fleet_persist_lag_seconds_count')).toBe(1);
    expect(sampleValue(samples, 'fleet_persist_lag_max_seconds')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'fleet_active_workspaces')).toBe(1);
    // Revisions and bytes written.
    expect(sampleValue(samples, 'fleet_revisions_committed_total', { reason: 'turn-end' })).toBe(1);
    expect(sampleValue(samples, 'fleet_persist_skipped_entries_total')).toBe(1);
    expect(sampleValue(samples, 'fleet_persist_refused_entries_total')).toBe(0);
    expect(sampleValue(samples, 'fleet_revision_bytes_total', { reason: 'turn-end' })).toBe(1500);
    expect(sampleValue(samples, 'fleet_revision_changed_files_total', { reason: 'turn-end' })).toBe(2);
    // Fence rejections, rsync exit codes (restores run rsync in archive format 1; format 2 restores materialize without it).
    expect(sampleValue(samples, 'fleet_fence_rejections_total')).toBe(1);
    expect(types.get('fleet_rsync_exits_total')).toBe('counter');
    if (h.config.archiveFormat === 1) expect(sampleValue(samples, 'fleet_rsync_exits_total', { code: '0' })).toBeGreaterThanOrEqual(1);
    // Locks: acquisitions (provision and ours), contention, failures.
    expect(sampleValue(samples, 'fleet_lock_acquisitions_total', { kind: 'provision' })).toBe(1);
    expect(sampleValue(samples, 'fleet_lock_acquisitions_total', { kind: 'bake' })).toBe(2);
    expect(sampleValue(samples, 'fleet_lock_wait_seconds_count', { kind: 'provision' })).toBe(1);
    expect(sampleValue(samples, 'fleet_lock_contentions_total', { kind: 'bake' })).toBe(1);
    expect(sampleValue(samples, 'fleet_lock_failures_total', { kind: 'bake', reason: 'lost' })).toBe(1);
    // Provider calls by outcome, with durations.
    expect(sampleValue(samples, 'fleet_provider_calls_total', { provider: 'local', operation: 'readReady', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'fleet_provider_call_duration_seconds_count', { provider: 'local', operation: 'create' })).toBeGreaterThanOrEqual(1);
    // Workers.
    expect(sampleValue(samples, 'fleet_workers')).toBe(1);
    // Every family is prefixed fleet_.
    expect([...types.keys()].every((name) => name.startsWith('fleet_'))).toBe(true);
    // The oldest waiting job's age per queue, 0 where nothing waits.
    expect(sampleValue(samples, 'fleet_queue_oldest_waiting_seconds', { queue: 'gc' })).toBeGreaterThanOrEqual(60);
    expect(sampleValue(samples, 'fleet_queue_oldest_waiting_seconds', { queue: 'provision' })).toBe(0);
    // Job outcome series exist at 0 before anything happened (rate() and ratios work from the start).
    expect(sampleValue(samples, 'fleet_jobs_total', { queue: 'gc', outcome: 'failed' })).toBe(0);
    expect(sampleValue(samples, 'fleet_jobs_total', { queue: 'provision', outcome: 'retry' })).toBe(0);
    // Which build serves the metrics.
    expect(sampleValue(samples, 'fleet_build_info', { version: FLEET_VERSION, node: process.version })).toBe(1);
    // The archive's filesystem, as statfs of FLEET_ARCHIVE_ROOT sees it.
    const fs = statfsSync(h.config.paths.archiveRoot);
    expect(sampleValue(samples, 'fleet_archive_filesystem_size_bytes')).toBe(fs.blocks * fs.bsize);
    expect(sampleValue(samples, 'fleet_archive_filesystem_avail_bytes')).toBeGreaterThan(0);
    // Every metric the shipped alert rules name is one this endpoint serves.
    const rules = readFileSync(path.join(ROOT, 'examples/prometheus/alerts.yml'), 'utf8');
    const named = new Set([...rules.matchAll(/\b(fleet_[a-z_]+)/g)].map((m) => m[1]!));
    expect(named.size).toBeGreaterThan(5);
    expect([...named].filter((name) => !types.has(name))).toEqual([]);
  });
});
