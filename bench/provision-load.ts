/**
 * The provisioning load test (issue: provisioning): N concurrent `provision` calls for W
 * workspaces from P producer clients against K real worker processes (local provider).
 * Reports latency percentiles and the invariants: created == workspaces, duplicates == 0,
 * orphans == 0, and every caller of a workspace saw the same handle and generation.
 *
 * Two optional phases follow on the placed workspaces (issue 17, item 6), each call timed from
 * enqueue to result through the queue, `producers` calls in flight at once:
 * - `reuses`: provisions of a workspace whose sandbox is live (outcome `reused`): a warm reuse;
 * - `restores`: that many workspaces get a file and an acknowledged persist, lose their sandbox
 *   (destroyed at the provider, as when a sandbox dies), and are provisioned again: a restore
 *   from the archive (outcome `restored`, the file checked in the new sandbox).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import { createFleetClient } from '../src/producers/fleet-client.js';
import { LocalProvider } from '../src/providers/local/local-provider.js';
import { AddressStore } from '../src/state/address-store.js';
import { fleetKeys } from '../src/keys.js';
import { createRedis } from '../src/redis.js';
import type { ProvisionResult } from '../src/queues/provision.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ProvisionLoadOptions {
  /** Environment of the fleet under test (REDIS_URL, FLEET_PREFIX, FLEET_HOME ...). */
  readonly env: Record<string, string>;
  readonly requests?: number;
  readonly workspaces?: number;
  readonly producers?: number;
  readonly workers?: number;
  /** Run once a tenth of the requests have completed, while the rest are in flight (a failover, say); `completed()` counts the requests done so far. */
  readonly duringLoad?: (completed: () => number) => Promise<void>;
  /** Warm reuses timed after the load (0: none). */
  readonly reuses?: number;
  /** Restores from the archive timed after the load (0: none). */
  readonly restores?: number;
}

/** Latencies of one timed phase, in ms. */
export interface PhaseLatency {
  readonly calls: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  /** Calls whose outcome was not the phase's (or whose restored tree lacked its file). */
  readonly wrong: number;
  /** Medians of where a call's time went, from the job's own timestamps (BullMQ, ms resolution). */
  /** Calls in flight at once. */
  readonly in_flight?: number;
  readonly breakdown_p50_ms?: { readonly queued: number; readonly processing: number; readonly notified: number };
}

export interface ProvisionLoadResult {
  readonly requests: number;
  readonly workspaces: number;
  readonly producers: number;
  readonly workers: number;
  readonly created: number;
  readonly duplicates: number;
  readonly orphans: number;
  readonly inconsistentCallers: number;
  readonly failed: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly wall_ms: number;
  /** Warm reuses alone (1 in flight), then under load (`producers` in flight). */
  readonly reuse?: readonly PhaseLatency[];
  readonly restore?: PhaseLatency;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

// `calls` run `producers` at a time; each one's duration in ms, sorted.
async function timedCalls(calls: number, inFlight: number, call: (i: number) => Promise<void>): Promise<number[]> {
  const durations: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, calls) }, async () => {
      while (next < calls) {
        const i = next++;
        const t0 = performance.now();
        await call(i);
        durations.push(performance.now() - t0);
      }
    }),
  );
  return durations.sort((a, b) => a - b);
}

const phase = (sorted: number[], wrong: number): PhaseLatency => ({
  calls: sorted.length,
  p50_ms: Math.round(percentile(sorted, 50) * 10) / 10,
  p99_ms: Math.round(percentile(sorted, 99) * 10) / 10,
  max_ms: Math.round((sorted[sorted.length - 1] ?? 0) * 10) / 10,
  wrong,
});

// Starts a worker process and resolves once it serves its queues.
function startWorker(env: Record<string, string>, queues = 'provision'): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'fleet.js'), 'worker', '--queues', queues], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('serving')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
  });
}

export async function runProvisionLoad(options: ProvisionLoadOptions): Promise<ProvisionLoadResult> {
  const { env, requests = 1_000, workspaces = 100, producers = 3, workers = 4, reuses = 0, restores = 0 } = options;
  const config = loadConfig(env);
  const children = await Promise.all(Array.from({ length: workers }, () => startWorker(env)));
  // The restore phase persists first: one process serves this host's persist queue.
  if (restores > 0) children.push(await startWorker(env, 'persist'));
  const clients = Array.from({ length: producers }, () => createFleetClient({ config }));
  try {
    const started = Date.now();
    const latencies: number[] = [];
    const seen = new Map<string, Set<string>>();
    let failed = 0;
    let completed = 0;
    let fault: Promise<void> = Promise.resolve();
    const tenth = Math.max(1, Math.floor(requests / 10));
    await Promise.all(
      Array.from({ length: requests }, async (_, i) => {
        const workspaceId = `load-${i % workspaces}`;
        const client = clients[i % producers]!;
        const t0 = Date.now();
        try {
          const { result } = await client.provision({ workspaceId }, { wait: true, timeoutMs: 120_000 });
          latencies.push(Date.now() - t0);
          const r = result as ProvisionResult;
          const set = seen.get(workspaceId) ?? new Set<string>();
          set.add(`${r.handle}#${r.generation}`);
          seen.set(workspaceId, set);
        } catch {
          failed += 1;
        }
        completed += 1;
        if (completed === tenth && options.duringLoad) fault = options.duringLoad(() => completed);
      }),
    );
    await fault;
    const wall = Date.now() - started;
    const local = new LocalProvider({ hostId: config.hostId, liveRoot: config.paths.liveRoot, snapshotRoot: config.paths.snapshotRoot, archiveRoot: config.paths.archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 });
    const provisionOf = async (workspaceId: string, i: number) => (await clients[i % producers]!.provision({ workspaceId }, { wait: true, timeoutMs: 120_000 })).result as ProvisionResult;
    // Warm reuses one at a time (the latency of a call alone), then `producers` at a time (under load).
    const timedReuses = async (inFlight: number): Promise<PhaseLatency> => {
      let wrong = 0;
      const spans: { jobId: string; sent: number; received: number }[] = [];
      const sorted = await timedCalls(reuses, inFlight, async (i) => {
        const sent = Date.now();
        const { jobId, result } = await clients[i % producers]!.provision({ workspaceId: `load-${(i * 7919) % workspaces}` }, { wait: true, timeoutMs: 120_000 });
        spans.push({ jobId, sent, received: Date.now() });
        if ((result as ProvisionResult).outcome !== 'reused') wrong += 1;
      });
      // Afterwards, untimed: enqueue → taken by a worker → finished → the caller has the result.
      const queue = clients[0]!.pool.queue('provision');
      const parts = { queued: [] as number[], processing: [] as number[], notified: [] as number[] };
      for (const span of spans) {
        const job = await queue.getJob(span.jobId);
        if (!job?.processedOn || !job.finishedOn) continue;
        parts.queued.push(job.processedOn - span.sent);
        parts.processing.push(job.finishedOn - job.processedOn);
        parts.notified.push(span.received - job.finishedOn);
      }
      const median = (values: number[]) => percentile(values.sort((a, b) => a - b), 50);
      return { ...phase(sorted, wrong), in_flight: inFlight, breakdown_p50_ms: { queued: median(parts.queued), processing: median(parts.processing), notified: median(parts.notified) } };
    };
    const reuse = reuses > 0 ? [await timedReuses(1), await timedReuses(producers)] : undefined;
    let restore: PhaseLatency | undefined;
    if (restores > 0) {
      const victims = Array.from({ length: Math.min(restores, workspaces) }, (_, i) => `load-${i}`);
      // Untimed preparation: a file, an acknowledged persist, then the sandbox dies.
      for (const [i, workspaceId] of victims.entries()) {
        const placed = await provisionOf(workspaceId, i);
        await local.writeFiles(placed.handle, [{ path: 'kept.txt', content: Buffer.from(workspaceId) }]);
        await clients[i % producers]!.persist({ workspaceId, generation: placed.generation, reason: 'manual' }, { wait: true, timeoutMs: 120_000 });
        await local.destroy(placed.handle, AbortSignal.timeout(60_000));
      }
      let wrong = 0;
      const sorted = await timedCalls(victims.length, producers, async (i) => {
        const restored = await provisionOf(victims[i]!, i);
        const kept = restored.outcome === 'restored' ? await local.readFile(restored.handle, 'kept.txt') : null;
        if (kept?.toString() !== victims[i]) wrong += 1;
      });
      restore = { ...phase(sorted, wrong), in_flight: producers };
    }
    const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: 5_000, name: 'loadtest' });
    try {
      const addresses = new AddressStore(redis, fleetKeys(config.redis.prefix, config.redis.keyLayout));
      const sandboxes = await local.list();
      let orphans = 0;
      let duplicates = 0;
      for (const sandbox of sandboxes) {
        const address = await addresses.get(sandbox.workspaceId);
        if (address?.handle !== sandbox.handle) orphans += 1;
      }
      // A restored workspace is at generation 2 by design; any other step above 1 is a duplicate.
      const restoredIds = new Set(Array.from({ length: restore ? Math.min(restores, workspaces) : 0 }, (_, i) => `load-${i}`));
      for (let w = 0; w < workspaces; w++) duplicates += Math.max(0, (await addresses.generation(`load-${w}`)) - (restoredIds.has(`load-${w}`) ? 2 : 1));
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        requests,
        workspaces,
        producers,
        workers,
        created: sandboxes.length,
        duplicates,
        orphans,
        inconsistentCallers: [...seen.values()].filter((s) => s.size > 1).length,
        failed,
        p50_ms: percentile(sorted, 50),
        p99_ms: percentile(sorted, 99),
        max_ms: sorted[sorted.length - 1] ?? 0,
        wall_ms: wall,
        ...(reuse ? { reuse } : {}),
        ...(restore ? { restore } : {}),
      };
    } finally {
      redis.disconnect();
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
  }
}
