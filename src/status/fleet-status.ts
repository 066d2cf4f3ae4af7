/**
 * A snapshot of the fleet for `fleet status`, `fleet top`, `/metrics` and the HTTP API: job
 * counts per queue (host-bound queues summed over hosts, and listed per host, including every
 * queue that holds jobs), live worker processes, and the alert of a queue with waiting jobs that
 * no live worker serves.
 */
import { Queue } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import { QUEUE_NAMES, parseQueueName, type QueueName } from '../queues/index.js';
import { countLiveWorkers, listLiveWorkers } from '../state/worker-registry.js';
import { readPersistLag, type LagSummary } from './persist-lag.js';
import { fleetQueueNames, knownHostIds } from './queue-names.js';
import { AddressStore } from '../state/address-store.js';
import { readFenceRejections } from '../state/fence-rejections.js';
import { HostRegistry } from '../state/host-registry.js';
import { PersistIntentStore } from '../state/persist-intent.js';
import { RuntimeStore } from '../state/runtime-store.js';

export { allQueueNames, knownHostIds } from './queue-names.js';

export const COUNT_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;
export type JobCounts = Record<(typeof COUNT_STATES)[number], number>;

/** A queue with waiting (or delayed) jobs and no live worker serving it: nothing will ever run them. */
export interface UnservedQueue {
  readonly queue: string;
  readonly waiting: number;
  readonly delayed: number;
}

export interface FleetStatus {
  readonly queues: Record<QueueName, JobCounts>;
  /** Counts per BullMQ queue name (e.g. `persist@host-a`, `persist@vercel`, `hostops@host-b`). */
  readonly byQueue: Record<string, JobCounts>;
  /** Per BullMQ queue, how long its oldest waiting job has waited (0: none waits). */
  readonly oldestWaitingMs: Record<string, number>;
  readonly workers: number;
  readonly hosts: readonly string[];
  /** Workspaces with a live incarnation. */
  readonly activeWorkspaces: number;
  /** Maximum persist lag over active workspaces (G3). */
  readonly maxPersistLagMs: number;
  /** Writes refused by the generation fence since the fleet started. */
  readonly fenceRejections: number;
  /** The alert: queues with waiting jobs that no live worker serves (empty when all is well). */
  readonly unservedQueues: readonly UnservedQueue[];
  /** How each sandbox host contains its local sandboxes (`namespaces`, or `none`: no isolation). */
  readonly isolation: Readonly<Record<string, string>>;
}

const zero = (): JobCounts => ({ waiting: 0, active: 0, delayed: 0, completed: 0, failed: 0 });

// The job counts of one BullMQ queue, and when its oldest waiting job was added (null: none waits).
async function countJobs(redis: RedisClient, prefix: string, bullName: string): Promise<{ counts: JobCounts; oldestWaitingAt: number | null }> {
  const queue = new Queue(bullName, { connection: redis, prefix });
  try {
    // BullMQ 6: 'prioritized' jobs are waiting too; 'waiting-children' is not used by the fleet.
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'completed', 'failed');
    // The wait list's oldest; of prioritized jobs (ordered by priority) the first and the last,
    // the last being the lowest priority: the one that starves when the queue never empties.
    const oldest = [
      ...((counts.waiting ?? 0) > 0 ? await queue.getJobs(['wait'], 0, 0, true) : []),
      ...((counts.prioritized ?? 0) > 0 ? [...(await queue.getJobs(['prioritized'], 0, 0, true)), ...(await queue.getJobs(['prioritized'], 0, 0, false))] : []),
    ]
      .map((job) => job?.timestamp)
      .filter((at): at is number => typeof at === 'number' && Number.isFinite(at));
    return {
      counts: {
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        completed: counts.completed ?? 0,
        failed: counts.failed ?? 0,
      },
      oldestWaitingAt: oldest.length > 0 ? Math.min(...oldest) : null,
    };
  } finally {
    await queue.close();
  }
}

/** The fleet status with the persist lag of every active workspace it summarises (read once, for `/metrics` and `fleet top`). */
export interface FleetSnapshot {
  readonly status: FleetStatus;
  readonly lag: LagSummary;
}

/** `fleet status`: the snapshot's status. */
export async function readFleetStatus(redis: RedisClient, keys: FleetKeys, config: Config): Promise<FleetStatus> {
  return (await readFleetSnapshot(redis, keys, config)).status;
}

/** The one read of the fleet behind `fleet status`, `fleet top` and `/metrics`; persist lag is computed here only. */
export async function readFleetSnapshot(redis: RedisClient, keys: FleetKeys, config: Config, now = Date.now()): Promise<FleetSnapshot> {
  const hosts = await knownHostIds(redis, keys, config.hostId);
  const names = await fleetQueueNames(redis, keys, config);
  const queues = Object.fromEntries(QUEUE_NAMES.map((n) => [n, zero()])) as Record<QueueName, JobCounts>;
  const byQueue: Record<string, JobCounts> = {};
  const oldestWaitingMs: Record<string, number> = {};
  await Promise.all(
    names.map(async (bullName) => {
      const { counts: row, oldestWaitingAt } = await countJobs(redis, keys.queuePrefix(bullName), bullName);
      byQueue[bullName] = row;
      oldestWaitingMs[bullName] = oldestWaitingAt === null ? 0 : Math.max(0, now - oldestWaitingAt);
      const base = parseQueueName(bullName)?.name;
      if (base) for (const state of COUNT_STATES) queues[base][state] += row[state];
    }),
  );
  const live = await listLiveWorkers(redis, keys, config.worker.heartbeatIntervalMs, now);
  const served = new Set(live.flatMap((w) => w.queues));
  const unservedQueues = Object.entries(byQueue)
    .filter(([name, counts]) => counts.waiting + counts.delayed > 0 && !served.has(name))
    .map(([queue, counts]) => ({ queue, waiting: counts.waiting, delayed: counts.delayed }))
    .sort((a, b) => a.queue.localeCompare(b.queue));
  const workers = await countLiveWorkers(redis, keys, config.worker.heartbeatIntervalMs, now);
  const lag = await readPersistLag({ addresses: new AddressStore(redis, keys), intents: new PersistIntentStore(redis, keys), runtime: new RuntimeStore(redis, keys) }, now);
  const fenceRejections = await readFenceRejections(redis, keys);
  const isolation = await new HostRegistry(redis, keys, config.worker.heartbeatIntervalMs).isolationOf(hosts);
  const status = { queues, byQueue, oldestWaitingMs, workers, hosts, activeWorkspaces: lag.activeWorkspaces, maxPersistLagMs: lag.maxPersistLagMs, fenceRejections, unservedQueues, isolation };
  return { status, lag };
}
