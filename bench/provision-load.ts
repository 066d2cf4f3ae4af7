/**
 * The provisioning load test (issue: provisioning): N concurrent `provision` calls for W
 * workspaces from P producer clients against K real worker processes (local provider).
 * Reports latency percentiles and the invariants: created == workspaces, duplicates == 0,
 * orphans == 0, and every caller of a workspace saw the same handle and generation.
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
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

// Starts a worker process and resolves once it serves its queues.
function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'fleet.js'), 'worker', '--queues', 'provision'], {
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
  const { env, requests = 1_000, workspaces = 100, producers = 3, workers = 4 } = options;
  const config = loadConfig(env);
  const children = await Promise.all(Array.from({ length: workers }, () => startWorker(env)));
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
    const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: 5_000, name: 'loadtest' });
    try {
      const addresses = new AddressStore(redis, fleetKeys(config.redis.prefix));
      const local = new LocalProvider({ hostId: config.hostId, liveRoot: config.paths.liveRoot, snapshotRoot: config.paths.snapshotRoot, archiveRoot: config.paths.archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 });
      const sandboxes = await local.list();
      let orphans = 0;
      let duplicates = 0;
      for (const sandbox of sandboxes) {
        const address = await addresses.get(sandbox.workspaceId);
        if (address?.handle !== sandbox.handle) orphans += 1;
      }
      for (let w = 0; w < workspaces; w++) duplicates += Math.max(0, (await addresses.generation(`load-${w}`)) - 1);
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
