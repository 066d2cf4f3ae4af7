/**
 * Adapts a fleet processor to BullMQ: validates the payload (a bad one fails at once,
 * unrecoverable, with the zod issues; so does data that is not JSON at all), arms the deadline and
 * the job's cancellation, binds a job logger, logs one line per
 * outcome (a success at debug, a failure at error), and maps errors by their retry intent (permanent → `UnrecoverableError`).
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { encodeFailure } from '../errors/failure-codec.js';
import { isFleetError } from '../errors/fleet-error.js';
import { JobDataUnreadableError } from '../errors/job-data-unreadable-error.js';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { jobLogger, type Logger } from '../logger.js';
import { parsePayload } from '../queues/payload.js';
import type { QueueDefinition } from '../queues/index.js';
import type { Processor, ProcessorContext, Progress } from '../jobs/processor-context.js';
import { splitTrace } from '../observability/job-trace.js';
import { noopMetrics, type MetricsRecorder } from '../metrics/metrics-recorder.js';
import { UnreadableJobData } from './unreadable-job-data.js';
import type { JobCancellation } from './job-cancellation.js';

export interface WrapOptions {
  readonly definition: QueueDefinition;
  readonly bullQueueName: string;
  readonly processor: Processor;
  readonly deadlineMs: number;
  /** The deadline of one job from its validated payload (the caller's deadline); @default deadlineMs */
  readonly jobDeadlineMs?: (payload: unknown) => number;
  readonly logger: Logger;
  /** How long a processor may ignore an aborted signal before the job is failed anyway. */
  readonly abortGraceMs?: number;
  /** Records each attempt's outcome and duration. @default noopMetrics */
  readonly metrics?: MetricsRecorder;
  /** `host:port` of the fleet's Redis: a refusal by it fails the attempt as `RedisUnavailable` (retried). */
  readonly redisAddress?: string;
  /** Where the worker cancels running jobs (lock lost, shutdown); none in unit tests. */
  readonly cancellation?: JobCancellation;
}

/**
 * A BullMQ processor of two parameters: BullMQ gives a third (an AbortSignal) only to processors
 * that declare one, and creates an AbortController per job for it. The fleet's cancellation goes
 * through `JobCancellation` and the job's own controller instead.
 */
export type BullProcessor = (job: Job, token?: string) => Promise<unknown>;

// Replaces unreadable stored data by a readable record of it (so the failed job can be listed)
// and returns the error the job fails with.
async function quarantine(job: Job, data: UnreadableJobData, queue: string, logger: Logger): Promise<JobDataUnreadableError> {
  try {
    await job.updateData(data.quarantined());
  } catch (error) {
    logger.warn({ err: error }, 'could not replace the unreadable job data');
  }
  return new JobDataUnreadableError(queue, String(job.id), data.cause);
}

const noop = (): void => undefined;

/**
 * The `ProcessorContext` of one job. A class, not an object literal: the lazy `logger` and
 * `signal` are getters on the prototype, where a literal would make V8 build an accessor pair
 * for every job. Spreading it (`{ ...ctx }`) would drop them: use `withSignal`.
 */
class JobContext implements ProcessorContext {
  readonly #logger: () => Logger;
  readonly #signal: () => AbortSignal;
  readonly #job: Job;
  readonly #started: number;
  #lastStep: string | undefined;

  constructor(
    logger: () => Logger,
    signal: () => AbortSignal,
    job: Job,
    readonly queue: string,
    readonly jobId: string,
    readonly attempt: number,
    readonly maxAttempts: number,
    readonly deadlineAt: number,
    started: number,
  ) {
    this.#logger = logger;
    this.#signal = signal;
    this.#job = job;
    this.#started = started;
  }

  get logger(): Logger {
    return this.#logger();
  }

  get signal(): AbortSignal {
    return this.#signal();
  }

  readonly progress = async (update: Progress): Promise<void> => {
    try {
      const at = Date.now();
      // Each new phase is also a line of the job's log (Bull Board's Logs tab, `fleet jobs show`).
      if (update.step !== this.#lastStep) {
        this.#lastStep = update.step;
        await this.#job.log(`${new Date(at).toISOString()} ${update.step} (${at - this.#started} ms)`);
      }
      await this.#job.updateProgress({ ...update, at });
    } catch (error) {
      this.#logger().warn({ err: error }, 'progress update failed');
    }
  };
}

/** Builds the BullMQ processor for one queue. */
export function wrapProcessor({ definition, bullQueueName, processor, deadlineMs: queueDeadlineMs, jobDeadlineMs, logger: root, abortGraceMs = 5_000, metrics = noopMetrics, redisAddress, cancellation }: WrapOptions): BullProcessor {
  const payloadLabel = `${definition.name} payload`;
  return async (job) => {
    const started = Date.now();
    const jobId = String(job.id);
    const maxAttempts = job.opts.attempts ?? 1;
    const attempt = job.attemptsMade + 1;
    // The request that caused the job (`_trace`), off the payload and onto every log line.
    const unreadable = job.data instanceof UnreadableJobData;
    const { payload: data, requestId } = unreadable ? { payload: job.data as unknown, requestId: null } : splitTrace(job.data);
    // The job's child logger is built on first use: a job that logs nothing (a success at the
    // default level) costs no pino child.
    let jobLog: Logger | undefined;
    const logger = (): Logger => {
      if (jobLog) return jobLog;
      const workspaceId = (data as { workspaceId?: unknown } | null)?.workspaceId;
      return (jobLog = jobLogger(root, { queue: bullQueueName, jobId, attempt, maxAttempts, ...(typeof workspaceId === 'string' ? { workspaceId } : {}), ...(requestId ? { reqId: requestId } : {}) }));
    };

    let payload: unknown;
    try {
      if (unreadable) throw await quarantine(job, job.data as UnreadableJobData, bullQueueName, logger());
      payload = parsePayload(payloadLabel, definition.schema, data);
    } catch (error) {
      logger().error({ err: error, durationMs: 0 }, 'job refused: invalid payload');
      await metrics.jobFinished(bullQueueName, 'failed', Date.now() - started);
      throw new UnrecoverableError(encodeFailure(error));
    }

    const deadlineMs = jobDeadlineMs ? jobDeadlineMs(payload) : queueDeadlineMs;
    const deadlineAt = started + deadlineMs;
    // At most one AbortController per job, made when the processor first reads `ctx.signal` (an
    // AbortSignal costs several microseconds and a processor that never looks needs none). Every
    // abort (deadline, lost lock, shutdown) goes through `abort`, which also starts the grace
    // period after which a processor that ignores its signal is failed anyway.
    let controller: AbortController | undefined;
    let aborted: { reason: unknown } | undefined;
    let fail: (reason: unknown) => void = noop;
    let grace: NodeJS.Timeout | undefined;
    const signal = (): AbortSignal => {
      if (!controller) {
        controller = new AbortController();
        if (aborted) controller.abort(aborted.reason);
      }
      return controller.signal;
    };
    const abort = (reason: unknown): void => {
      if (aborted) return;
      aborted = { reason };
      controller?.abort(reason);
      grace = setTimeout(() => fail(reason), abortGraceMs);
      grace.unref();
    };
    const deadline = setTimeout(() => abort(new DeadlineExceededError(`${definition.name} job ${jobId}`, deadlineMs)), deadlineMs);
    deadline.unref();
    const untrack = cancellation ? cancellation.track(jobId, abort) : noop;

    const ctx = new JobContext(logger, signal, job, bullQueueName, jobId, attempt, maxAttempts, deadlineAt, started);

    try {
      const result = await new Promise<unknown>((resolve, reject) => {
        fail = reject;
        processor(payload, ctx).then(resolve, reject);
      });
      // At debug: one line per success is noise at info (and was most of the fleet's overhead over bare BullMQ).
      if (root.isLevelEnabled('debug')) logger().debug({ durationMs: Date.now() - started }, 'job completed');
      await metrics.jobFinished(bullQueueName, 'completed', Date.now() - started);
      return result;
    } catch (thrown) {
      const durationMs = Date.now() - started;
      // Typed here so the failure crosses the queue as RedisUnavailable, not as Unexpected text.
      const error = (redisAddress === undefined ? null : RedisUnavailableError.from(thrown, redisAddress)) ?? thrown;
      const retryable = isFleetError(error) ? error.retryable : true;
      const willRetry = retryable && attempt < maxAttempts;
      logger().error({ err: error, durationMs, retryable, willRetry }, `job failed (attempt ${attempt} of ${maxAttempts})`);
      await metrics.jobFinished(bullQueueName, willRetry ? 'retry' : 'failed', durationMs);
      if (!retryable) throw new UnrecoverableError(encodeFailure(error));
      throw new Error(encodeFailure(error), { cause: error });
    } finally {
      clearTimeout(deadline);
      clearTimeout(grace);
      untrack();
    }
  };
}
