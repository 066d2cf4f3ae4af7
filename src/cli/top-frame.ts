/**
 * `fleet top`: one snapshot of the fleet (queues, persist lag, workers) and its text frame.
 * Rendering is pure so the live view and `--once` print the same thing.
 */
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import { COUNT_STATES, readFleetSnapshot, type FleetStatus } from '../status/fleet-status.js';
import { listLiveWorkers, type LiveWorker } from '../state/worker-registry.js';
import { table } from './output.js';

export interface TopSnapshot {
  readonly at: string;
  readonly status: FleetStatus;
  readonly lag: { readonly activeWorkspaces: number; readonly maxPersistLagMs: number; readonly p50PersistLagMs: number };
  readonly workers: readonly LiveWorker[];
}

// The median of a list (0 when empty).
function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

export async function readTopSnapshot(redis: RedisClient, keys: FleetKeys, config: Config, now = Date.now()): Promise<TopSnapshot> {
  const [{ status, lag }, workers] = await Promise.all([readFleetSnapshot(redis, keys, config, now), listLiveWorkers(redis, keys, config.worker.heartbeatIntervalMs, now)]);
  return {
    at: new Date(now).toISOString(),
    status,
    lag: { activeWorkspaces: lag.activeWorkspaces, maxPersistLagMs: lag.maxPersistLagMs, p50PersistLagMs: median(lag.lags) },
    workers,
  };
}

// Seconds with one decimal for lag columns.
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export function renderTopFrame(snapshot: TopSnapshot): string {
  const queues = Object.entries(snapshot.status.byQueue).sort(([a], [b]) => a.localeCompare(b));
  return [
    `fleet top   ${snapshot.at}   hosts: ${snapshot.status.hosts.join(', ')}`,
    '',
    table(['queue', ...COUNT_STATES], queues.map(([name, counts]) => [name, ...COUNT_STATES.map((s) => counts[s])])),
    '',
    `active workspaces: ${snapshot.lag.activeWorkspaces}   persist lag max: ${seconds(snapshot.lag.maxPersistLagMs)}   p50: ${seconds(snapshot.lag.p50PersistLagMs)}   fence rejections: ${snapshot.status.fenceRejections}`,
    '',
    snapshot.workers.length === 0
      ? 'workers: none alive'
      : table(['worker', 'host', 'pid', 'queues', 'seen'], snapshot.workers.map((w) => [w.id, w.hostId, w.pid, w.queues.join(','), `${seconds(w.seenAgoMs)} ago`])),
  ].join('\n');
}
