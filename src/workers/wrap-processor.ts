/**
 * Adapts a fleet processor to BullMQ: validates the payload (a bad one fails at once,
 * unrecoverable, with the zod issues; so does data that is not JSON at all), arms the deadline, binds a job logger, logs one line per
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
import type { Processor, Progress } from '../jobs/processor-context.js';
import { splitTrace } from '../observability/job-trace.js';
import { noopMetrics, type MetricsRecorder } from '../metrics/metrics-recorder.js';
import { UnreadableJobData } from './unreadable-job-data.js';

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
}

export type BullProcessor = (job: Job, token?: string, signal?: AbortSignal) => Promise<unknown>;

// Rejects with the signal's reason `graceMs` after it aborts; never rejects otherwise.
function afterAbort(signal: AbortSignal, graceMs: number): { promise: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => {
      timer = setTimeout(() => reject(signal.reason), graceMs);
      timer.unref();
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return {
    promise,
    cancel: () => {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    },
  };
}

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

/** Builds the BullMQ processor for one queue. */
export function wrapProcessor({ definition, bullQueueName, processor, deadlineMs: queueDeadlineMs, jobDeadlineMs, logger: root, abortGraceMs = 5_000, metrics = noopMetrics, redisAddress }: WrapOptions): BullProcessor {
  return async (job, _token, bullSignal) => {
    const maxAttempts = job.opts.attempts ?? 1;
    const attempt = job.attemptsMade + 1;
    // The request that caused the job (`_trace`), off the payload and onto every log line.
    const { payload: data, requestId } = job.data instanceof UnreadableJobData ? { payload: job.data, requestId: null } : splitTrace(job.data);
    const workspaceId = typeof (data as { workspaceId?: unknown } | null)?.workspaceId === 'string' ? (data as { workspaceId: string }).workspaceId : undefined;
    const logger = jobLogger(root, { queue: bullQueueName, jobId: String(job.id), attempt, maxAttempts, ...(workspaceId ? { workspaceId } : {}), ...(requestId ? { reqId: requestId } : {}) });
    const started = Date.now();

    let payload: unknown;
    try {
      if (job.data instanceof UnreadableJobData) throw await quarantine(job, job.data, bullQueueName, logger);
      payload = parsePayload(`${definition.name} payload`, definition.schema, data);
    } catch (error) {
      logger.error({ err: error, durationMs: 0 }, 'job refused: invalid payload');
      await metrics.jobFinished(bullQueueName, 'failed', Date.now() - started);
      throw new UnrecoverableError(encodeFailure(error));
    }

    const deadlineMs = jobDeadlineMs ? jobDeadlineMs(payload) : queueDeadlineMs;
    const controller = new AbortController();
    const deadlineAt = started + deadlineMs;
    const deadline = setTimeout(() => controller.abort(new DeadlineExceededError(`${definition.name} job ${job.id}`, deadlineMs)), deadlineMs);
    deadline.unref();
    const onCancel = () => controller.abort(bullSignal?.reason ?? new DeadlineExceededError(`${definition.name} job ${job.id} (cancelled)`, deadlineMs));
    if (bullSignal?.aborted) onCancel();
    else bullSignal?.addEventListener('abort', onCancel, { once: true });
    const forced = afterAbort(controller.signal, abortGraceMs);

    let lastStep: string | undefined;
    const ctx = {
      logger,
      signal: controller.signal,
      queue: bullQueueName,
      jobId: String(job.id),
      attempt,
      maxAttempts,
      deadlineAt,
      progress: async (update: Progress) => {
        try {
          const at = Date.now();
          // Each new phase is also a line of the job's log (Bull Board's Logs tab, `fleet jobs show`).
          if (update.step !== lastStep) {
            lastStep = update.step;
            await job.log(`${new Date(at).toISOString()} ${update.step} (${at - started} ms)`);
          }
          await job.updateProgress({ ...update, at });
        } catch (error) {
          logger.warn({ err: error }, 'progress update failed');
        }
      },
    };

    try {
      const result = await Promise.race([processor(payload, ctx), forced.promise]);
      // At debug: one line per success is noise at info (and was most of the fleet's overhead over bare BullMQ).
      logger.debug({ durationMs: Date.now() - started }, 'job completed');
      await metrics.jobFinished(bullQueueName, 'completed', Date.now() - started);
      return result;
    } catch (thrown) {
      const durationMs = Date.now() - started;
      // Typed here so the failure crosses the queue as RedisUnavailable, not as Unexpected text.
      const error = (redisAddress === undefined ? null : RedisUnavailableError.from(thrown, redisAddress)) ?? thrown;
      const retryable = isFleetError(error) ? error.retryable : true;
      const willRetry = retryable && attempt < maxAttempts;
      logger.error({ err: error, durationMs, retryable, willRetry }, `job failed (attempt ${attempt} of ${maxAttempts})`);
      await metrics.jobFinished(bullQueueName, willRetry ? 'retry' : 'failed', durationMs);
      if (!retryable) throw new UnrecoverableError(encodeFailure(error));
      throw new Error(encodeFailure(error), { cause: error });
    } finally {
      clearTimeout(deadline);
      forced.cancel();
      bullSignal?.removeEventListener('abort', onCancel);
    }
  };
}
