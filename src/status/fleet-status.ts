/**
 * A snapshot of the fleet for `fleet status`, `fleet top` and the HTTP API: job counts per
 * queue (host-bound queues summed over hosts, and listed per host), live worker processes.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import { QUEUE_NAMES, QUEUES, queueNameFor, type QueueName } from '../queues/index.js';
import { countLiveWorkers } from '../runtime/worker-registry.js';
import { readPersistLag } from './persist-lag.js';
import { HostRegistry } from '../state/host-registry.js';

export const COUNT_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;
export type JobCounts = Record<(typeof COUNT_STATES)[number], number>;

export interface FleetStatus {
  readonly queues: Record<QueueName, JobCounts>;
  /** Counts per BullMQ queue name (e.g. `persist@host-a`). */
  readonly byQueue: Record<string, JobCounts>;
  readonly workers: number;
  readonly hosts: readonly string[];
  /** Workspaces with a live incarnation. */
  readonly activeWorkspaces: number;
  /** Maximum persist lag over active workspaces (G3). */
  readonly maxPersistLagMs: number;
  /** Writes refused by the generation fence since the fleet started. */
  readonly fenceRejections: number;
  /** How each sandbox host contains its local sandboxes (`namespaces`, or `none`: no isolation). */
  readonly isolation: Readonly<Record<string, string>>;
}

const zero = (): JobCounts => ({ waiting: 0, active: 0, delayed: 0, completed: 0, failed: 0 });

/** Every BullMQ queue name of the fleet for the given hosts. */
export function allQueueNames(hosts: readonly string[]): string[] {
  return QUEUE_NAMES.flatMap((name) => (QUEUES[name].hostBound ? hosts.map((h) => queueNameFor(name, h)) : [name]));
}

/** Hosts that ever registered (plus this one). */
export async function knownHostIds(redis: Redis, keys: FleetKeys, selfHostId: string): Promise<string[]> {
  const hosts = await redis.zrange(keys.hosts(), '0', '-1');
  return [...new Set([selfHostId, ...hosts])].sort();
}

export async function readFleetStatus(redis: Redis, keys: FleetKeys, config: Config): Promise<FleetStatus> {
  const hosts = await knownHostIds(redis, keys, config.hostId);
  const queues = Object.fromEntries(QUEUE_NAMES.map((n) => [n, zero()])) as Record<QueueName, JobCounts>;
  const byQueue: Record<string, JobCounts> = {};
  await Promise.all(
    QUEUE_NAMES.flatMap((name) =>
      (QUEUES[name].hostBound ? hosts : [null]).map(async (hostId) => {
        const bullName = hostId ? queueNameFor(name, hostId) : name;
        const queue = new Queue(bullName, { connection: redis, prefix: config.redis.prefix });
        try {
          // BullMQ 6: 'prioritized' jobs are waiting too; 'waiting-children' is not used by the fleet.
          const counts = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'completed', 'failed');
          const row: JobCounts = {
            waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
            active: counts.active ?? 0,
            delayed: counts.delayed ?? 0,
            completed: counts.completed ?? 0,
            failed: counts.failed ?? 0,
          };
          byQueue[bullName] = row;
          for (const state of COUNT_STATES) queues[name][state] += row[state];
        } finally {
          await queue.close();
        }
      }),
    ),
  );
  const workers = await countLiveWorkers(redis, keys, config.worker.heartbeatIntervalMs);
  const lag = await readPersistLag(redis, keys);
  const fenceRejections = Number((await redis.hget(keys.counters(), 'fenceRejections')) ?? 0);
  const isolation = await new HostRegistry(redis, keys, config.worker.heartbeatIntervalMs).isolationOf(hosts);
  return { queues, byQueue, workers, hosts, activeWorkspaces: lag.activeWorkspaces, maxPersistLagMs: lag.maxPersistLagMs, fenceRejections, isolation };
}
