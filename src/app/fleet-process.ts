/**
 * A worker process of the fleet (what `fleet up` and `fleet worker` run): connections,
 * processors and BullMQ workers for the given queues, torn down in reverse order.
 */
import type { WorkerOptions } from 'bullmq';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { QueueName } from '../queues/index.js';
import { closeRedis, createRedis, redisResolved } from '../redis.js';
import { buildProcessors, gcDeps } from './build-processors.js';
import type { Processor } from '../jobs/processor-context.js';
import { startWorkers, type RunningWorkers } from '../workers/run-workers.js';
import { Releasers } from '../runtime/releasers.js';
import { createServices, type FleetServices } from './services.js';
import { flushHeldWorkspaces } from '../runtime/shutdown-flush.js';
import { installGcSchedules } from '../gc/gc-schedules.js';
import { startHostJanitor } from '../runtime/host-janitor.js';
import { startSandboxHostHeartbeat } from '../runtime/sandbox-host-heartbeat.js';
import { HOSTOPS_QUEUE } from '../hostops/hostops-queue.js';
import { hostOpsProcessor } from '../workers/processors/hostops.js';
import { execOutputsOf } from '../hostops/serve-host-op.js';
import { completionEvent, failureEvent } from '../status/job-events.js';
import { reportPersistFailure } from '../workers/processors/report-persist-failure.js';

export interface FleetProcessOptions {
  /** Configuration with `redis.url` resolved. */
  readonly config: Config;
  readonly queues: readonly QueueName[];
  /**
   * Hosts whose host-bound queues this process serves: this host (its live trees, with the
   * hostops queue, the sandbox-host heartbeat, the janitor and the shutdown flush) and/or remote
   * provider hosts such as `vercel` (persist@vercel, checkpoint@vercel). @default [config.hostId]
   */
  readonly hosts?: readonly string[];
  readonly logger: Logger;
  /** Replaces built processors (tests). */
  readonly processors?: Partial<Record<QueueName, Processor>>;
  readonly workerOptions?: Partial<WorkerOptions>;
  /** Upsert the GC job schedulers when serving gc. @default true */
  readonly installSchedules?: boolean;
}

export interface FleetProcess {
  readonly workers: RunningWorkers;
  readonly services: FleetServices;
  /** Graceful stop within the configured grace; idempotent. */
  close(): Promise<void>;
}

export async function startFleetProcess({ config, queues, hosts = [config.hostId], logger, processors, workerOptions, installSchedules = true }: FleetProcessOptions): Promise<FleetProcess> {
  if (!redisResolved(config.redis)) throw new Error('startFleetProcess: config.redis must name a Redis (resolve embedded mode first)');
  const releasers = new Releasers();
  try {
    const workerConnection = createRedis({ target: config.redis, role: 'worker', commandTimeoutMs: config.redis.commandTimeoutMs, name: `fleet-worker:${config.hostId}`, logger });
    releasers.add('worker connection', () => closeRedis(workerConnection));
    const client = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: `fleet-stores:${config.hostId}`, logger });
    releasers.add('client connection', () => closeRedis(client));
    await Promise.all([workerConnection.connect(), client.connect()]);

    const services = createServices({ config, redis: client, logger });
    releasers.add('services', () => services.close());
    // The start-up probe: `none` is logged as a warning, `namespaces` unavailable stops start-up.
    const isolation = await services.isolation();
    if (isolation.mode === 'namespaces') {
      logger.info(
        { isolation: isolation.mode, network: isolation.network, cgroups: isolation.cgroupParent !== null },
        `sandboxes: namespaces, network ${isolation.network}, ${isolation.cgroupParent ? 'cgroup v2 limits and rlimits' : `rlimits only (${isolation.cgroupReason})`}`,
      );
    }
    const built = { ...buildProcessors(services), ...(processors ?? {}) };
    // This host's live trees are served here only when this host is among the served hosts.
    const ownHost = hosts.includes(config.hostId) && queues.includes('persist');
    const workers = await startWorkers({
      config,
      queues,
      hosts,
      processors: built,
      connection: workerConnection,
      logger,
      workerOptions: workerOptions ?? {},
      metrics: services.metrics,
      // The host's persist workers also run provider operations for callers on other hosts.
      internal: ownHost
        ? [{ definition: HOSTOPS_QUEUE, processor: hostOpsProcessor({ local: services.providers.get('local'), hostId: config.hostId, archiveRoot: config.paths.archiveRoot, execOutputs: execOutputsOf(services.execOutputs, logger) }) }]
        : [],
      // A persist that failed for good (including by stalling) is reported to its waiters.
      onFinalFailure: async (queue, data, reason, job) => {
        if (queue === 'persist') await reportPersistFailure(services.intents, data, reason, job);
        await services.events.emit(failureEvent(job.queue, job.jobId, data, reason));
      },
      // What an app acts on is told on `GET /v1/events`.
      onCompleted: async (queue, name, data, result) => {
        const event = completionEvent(queue, name, data, result);
        if (event) await services.events.emit(event);
      },
    });
    releasers.add('workers', () => workers.close());
    if (ownHost) releasers.add('sandbox host heartbeat', await startSandboxHostHeartbeat(services, config.worker.heartbeatIntervalMs));
    if (queues.includes('gc') && installSchedules) await installGcSchedules(services.client.pool, config);
    const orphansEveryMs = config.retention.gcSchedule.orphans;
    if (ownHost && installSchedules && typeof orphansEveryMs === 'number' && orphansEveryMs > 0) {
      releasers.add('host janitor', startHostJanitor(gcDeps(services), orphansEveryMs));
    }
    // Runs before the workers close (LIFO), so this process's persist worker still serves the flush.
    // The checkpoint ticks stop first: a tick after the flush would enqueue a persist that this
    // process no longer serves (it would wait in the queue until a fleet starts again); one before
    // it coalesces with the flush's persist, which waits for it.
    if (ownHost && config.shutdown.flushMs > 0) {
      releasers.add('shutdown flush', async () => {
        if (queues.includes('checkpoint')) await workers.stopTaking('checkpoint');
        await flushHeldWorkspaces(services, config.shutdown.flushMs);
      });
    }
    let closing: Promise<void> | null = null;
    return {
      workers,
      services,
      close: () => (closing ??= releasers.releaseAll()),
    };
  } catch (error) {
    await releasers.releaseAll().catch(() => undefined);
    throw error;
  }
}
