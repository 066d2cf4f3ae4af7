/**
 * Owns the BullMQ Worker lifecycle of one process: one Worker per queue it is given, lock-loss
 * wired to cancellation, heartbeat registration, and an idempotent `close()` that lets active
 * jobs finish within the grace period and is raced against a timer (BullMQ's `close()` hangs
 * forever when Redis is gone).
 */
import { splitTrace } from '../observability/job-trace.js';
import { bullTelemetry } from '../observability/tracing.js';
import type { WorkerOptions } from 'bullmq';
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import { fleetKeys } from '../keys.js';
import { redisAddress } from '../redis.js';
import type { Logger } from '../logger.js';
import { QUEUES, type QueueDefinition, type QueueName } from '../queues/index.js';
import { registerWorker, type WorkerRegistration } from '../state/worker-registry.js';
import { notImplemented } from './not-implemented.js';
import type { Processor } from '../jobs/processor-context.js';
import { wrapProcessor } from './wrap-processor.js';
import { FleetWorker } from './fleet-worker.js';
import { JobCancellation } from './job-cancellation.js';
import { JobCancelledError } from '../errors/job-cancelled-error.js';
import { effectiveTimeouts } from './effective-timeouts.js';
import type { MetricsRecorder } from '../metrics/metrics-recorder.js';

export interface StartWorkersOptions {
  readonly config: Config;
  readonly queues: readonly QueueName[];
  /**
   * Hosts whose host-bound queues (`persist@<host>`, `checkpoint@<host>`) this process serves:
   * this host, and/or remote provider hosts such as `vercel`. @default [config.hostId]
   */
  readonly hosts?: readonly string[];
  readonly processors: Partial<Record<QueueName, Processor>>;
  /** A `worker`-role connection (maxRetriesPerRequest: null); owned by the caller. */
  readonly connection: RedisClient;
  readonly logger: Logger;
  /** Overrides for tests (short lock and stall intervals). */
  readonly workerOptions?: Partial<WorkerOptions>;
  /** Internal queues served next to the fleet's six (e.g. `hostops@<host>`). */
  readonly internal?: readonly { readonly definition: QueueDefinition; readonly processor: Processor }[];
  /** Called once a job has failed for good (no attempts left or unrecoverable); `job` names it in BullMQ. */
  readonly onFinalFailure?: (queue: QueueName, data: unknown, failedReason: string, job: { readonly queue: string; readonly jobId: string }) => Promise<void> | void;
  /** Called once a job of a fleet queue completed, with its result (events; never fails the job). */
  readonly onCompleted?: (queue: QueueName, jobName: string, data: unknown, result: unknown) => Promise<void> | void;
  /** Job outcomes and durations (fleet_jobs_total, fleet_job_duration_seconds). */
  readonly metrics?: MetricsRecorder;
}

export interface RunningWorkers {
  /** BullMQ queue names served (host-bound ones carry `@hostId`). */
  readonly queueNames: readonly string[];
  readonly registration: WorkerRegistration;
  /**
   * Stops fetching on one fleet queue (every host it is served for), lets its active jobs finish
   * within `graceMs`, then forces; the other queues go on. Idempotent. Shutdown stops the checkpoint
   * ticks this way before the flush, so no tick enqueues a persist after it that nobody serves.
   */
  stopTaking(queue: QueueName, graceMs?: number): Promise<void>;
  /** Stops fetching, lets active jobs finish within `graceMs`, then forces. Idempotent. */
  close(graceMs?: number): Promise<void>;
}

/** Starts one BullMQ Worker per queue. */
export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  const { config, queues, processors, connection, logger, workerOptions = {}, onFinalFailure, onCompleted, metrics, internal = [], hosts = [config.hostId] } = options;
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  const workers: { name: string; bullName: string; definition: QueueDefinition; worker: FleetWorker; cancellation: JobCancellation }[] = [];
  // A host-bound queue once per served host; internal queues are this host's own.
  const specs = [
    ...queues.flatMap((name) =>
      (QUEUES[name].hostBound ? hosts : [null]).map((hostId) => ({ definition: QUEUES[name] as QueueDefinition, hostId, processor: processors[name] ?? notImplemented(name), public: name as QueueName | null })),
    ),
    ...internal.map((q) => ({ definition: q.definition, hostId: config.hostId, processor: q.processor, public: null })),
  ];

  for (const { definition, hostId, processor, public: publicName } of specs) {
    const name = definition.name;
    const bullName = definition.hostBound ? `${name}@${hostId}` : name;
    const cancellation = new JobCancellation();
    const worker = new FleetWorker(
      bullName,
      wrapProcessor({
        definition,
        bullQueueName: bullName,
        processor,
        deadlineMs: definition.deadlineMs(config),
        ...(definition.jobDeadlineMs ? { jobDeadlineMs: (payload: unknown) => definition.jobDeadlineMs!(payload, config) } : {}),
        logger,
        redisAddress: redisAddress(connection),
        cancellation,
        ...(metrics ? { metrics } : {}),
      }),
      {
        connection,
        prefix: keys.queuePrefix(bullName),
        concurrency: config.worker.concurrency ?? definition.concurrency,
        lockDuration: config.worker.lockDurationMs,
        stalledInterval: config.worker.stalledIntervalMs,
        maxStalledCount: config.worker.maxStalledCount,
        name: `${config.hostId}:${process.pid}`,
        autorun: true,
        ...(bullTelemetry() ? { telemetry: bullTelemetry()! } : {}),
        ...workerOptions,
      },
    );
    worker.on('error', (error) => logger.warn({ err: error, queue: bullName }, 'worker error'));
    // Lock loss does not stop a BullMQ processor by itself: abort it so it stops writing.
    worker.on('lockRenewalFailed', (jobIds: string[]) => {
      for (const id of jobIds) {
        logger.warn({ queue: bullName, jobId: id }, 'lock renewal failed: cancelling job');
        cancellation.cancel(id, new JobCancelledError(bullName, id, 'lock lost'));
      }
    });
    worker.on('completed', (job, result) => {
      if (!onCompleted || !publicName) return;
      Promise.resolve(onCompleted(publicName, job.name, splitTrace(job.data).payload, result)).catch((hookError: unknown) => logger.warn({ err: hookError, queue: bullName }, 'completion hook failed'));
    });
    worker.on('failed', (job, error) => {
      if (!job || !onFinalFailure || !publicName) return;
      const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
      if (final) {
        Promise.resolve(onFinalFailure(publicName, splitTrace(job.data).payload, job.failedReason ?? error.message, { queue: bullName, jobId: String(job.id) })).catch((hookError: unknown) =>
          logger.warn({ err: hookError, queue: bullName }, 'final-failure hook failed'),
        );
      }
    });
    workers.push({ name, bullName, definition, worker, cancellation });
  }
  await Promise.all(workers.map(({ worker }) => worker.waitUntilReady()));

  const registration = await registerWorker({
    redis: connection,
    keys,
    hostId: config.hostId,
    queues: workers.map((w) => w.bullName),
    intervalMs: config.worker.heartbeatIntervalMs,
    logger,
  });
  logger.info({ queues: workers.map((w) => w.bullName), concurrency: config.worker.concurrency ?? 'per queue' }, 'workers started');
  logger.info({ timeouts: effectiveTimeouts(config, workers) }, 'effective timeouts');

  // Stops fetching on `selected`, lets their active jobs finish within `graceMs`, then cancels them and forces.
  const closeWorkers = async (selected: typeof workers, graceMs: number): Promise<void> => {
    const graceful = Promise.all(selected.map(({ worker }) => worker.close())).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
      timer.unref();
    });
    const finished = await Promise.race([graceful, expired]);
    clearTimeout(timer);
    if (finished) return;
    logger.warn({ graceMs, queues: selected.map((w) => w.bullName) }, 'grace period over: cancelling active jobs');
    for (const { bullName, cancellation } of selected) cancellation.cancelAllWith((jobId) => new JobCancelledError(bullName, jobId, 'shutdown'));
    // Cancelled processors get a moment to clean up; then we stop waiting (jobs will stall and be re-run).
    await Promise.race([graceful, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    await Promise.race([Promise.all(selected.map(({ worker }) => worker.close(true))), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  };
  const stopped = new Map<QueueName, Promise<void>>();
  let closing: Promise<void> | null = null;
  return {
    queueNames: workers.map((w) => w.bullName),
    registration,
    stopTaking(queue, graceMs = config.shutdown.graceMs) {
      let done = stopped.get(queue);
      if (!done) {
        done = closeWorkers(workers.filter((w) => w.name === queue), graceMs);
        stopped.set(queue, done);
      }
      return done;
    },
    close(graceMs = config.shutdown.graceMs) {
      closing ??= (async () => {
        await closeWorkers(workers, graceMs);
        await registration.stop();
      })();
      return closing;
    },
  };
}
