/**
 * Adapts a fleet processor to BullMQ: validates the payload (a bad one fails at once,
 * unrecoverable, with the zod issues), arms the deadline, binds a job logger, logs one line per
 * outcome, and maps errors by their retry intent (permanent → `UnrecoverableError`).
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { encodeFailure } from '../errors/failure-codec.js';
import { isFleetError } from '../errors/fleet-error.js';
import { jobLogger, type JobScope, type Logger } from '../logger.js';
import { parsePayload } from '../queues/payload.js';
import type { QueueDefinition } from '../queues/index.js';
import type { Processor, ProcessorContext, Progress } from './processor-context.js';

export interface WrapOptions {
  readonly definition: QueueDefinition;
  readonly bullQueueName: string;
  readonly processor: Processor;
  readonly deadlineMs: number;
  readonly logger: Logger;
  /** How long a processor may ignore an aborted signal before the job is failed anyway. */
  readonly abortGraceMs?: number;
}

export type BullProcessor = (job: Job, token?: string, signal?: AbortSignal) => Promise<unknown>;

/**
 * The abort side of one job: the signal the processor sees fires at the deadline or when BullMQ
 * cancels the job (lock lost, shutdown), and `forced` rejects `graceMs` later if the processor
 * ignores it. The `AbortController` is only created when someone reads `signal` (an
 * AbortController costs several microseconds; cheap jobs that never look at it skip that).
 */
function jobAbort(options: { deadlineMs: number; graceMs: number; bullSignal: AbortSignal | undefined; deadlineReason: () => unknown; cancelReason: () => unknown }) {
  const { bullSignal } = options;
  let controller: AbortController | undefined;
  let aborted: { reason: unknown } | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let rejectForced!: (reason: unknown) => void;
  const forced = new Promise<never>((_, reject) => {
    rejectForced = reject;
  });
  const abort = (reason: unknown) => {
    if (aborted) return;
    aborted = { reason };
    controller?.abort(reason);
    graceTimer = setTimeout(() => rejectForced(reason), options.graceMs);
    graceTimer.unref();
  };
  const deadline = setTimeout(() => abort(options.deadlineReason()), options.deadlineMs);
  deadline.unref();
  const onCancel = () => abort(bullSignal?.reason ?? options.cancelReason());
  if (bullSignal?.aborted) onCancel();
  else bullSignal?.addEventListener('abort', onCancel, { once: true });
  return {
    forced,
    get signal(): AbortSignal {
      if (!controller) {
        controller = new AbortController();
        if (aborted) controller.abort(aborted.reason);
      }
      return controller.signal;
    },
    dispose() {
      clearTimeout(deadline);
      clearTimeout(graceTimer);
      bullSignal?.removeEventListener('abort', onCancel);
    },
  };
}

/** Builds the BullMQ processor for one queue. */
export function wrapProcessor({ definition, bullQueueName, processor, deadlineMs, logger: root, abortGraceMs = 5_000 }: WrapOptions): BullProcessor {
  return async (job, _token, bullSignal) => {
    const maxAttempts = job.opts.attempts ?? 1;
    const attempt = job.attemptsMade + 1;
    const data = job.data as { workspaceId?: unknown } | null;
    const workspaceId = typeof data?.workspaceId === 'string' ? data.workspaceId : undefined;
    const scope: JobScope = { queue: bullQueueName, jobId: String(job.id), attempt, maxAttempts, ...(workspaceId ? { workspaceId } : {}) };
    // The job logger is bound when first used; until then outcome lines carry the scope themselves (same output).
    let jobLog: Logger | undefined;
    const outcome = (fields: Record<string, unknown>) => (jobLog ? [jobLog, fields] : [root, { ...scope, ...fields }]) as [Logger, Record<string, unknown>];
    const started = Date.now();

    let payload: unknown;
    try {
      payload = parsePayload(`${definition.name} payload`, definition.schema, job.data);
    } catch (error) {
      const [log, fields] = outcome({ err: error, durationMs: 0 });
      log.error(fields, 'job refused: invalid payload');
      throw new UnrecoverableError(encodeFailure(error));
    }

    const abort = jobAbort({
      deadlineMs,
      graceMs: abortGraceMs,
      bullSignal,
      deadlineReason: () => new DeadlineExceededError(`${definition.name} job ${job.id}`, deadlineMs),
      cancelReason: () => new DeadlineExceededError(`${definition.name} job ${job.id} (cancelled)`, deadlineMs),
    });
    const ctx: ProcessorContext = {
      get logger() {
        return (jobLog ??= jobLogger(root, scope));
      },
      get signal() {
        return abort.signal;
      },
      queue: bullQueueName,
      jobId: String(job.id),
      attempt,
      maxAttempts,
      deadlineAt: started + deadlineMs,
      progress: async (update: Progress) => {
        try {
          await job.updateProgress({ ...update, at: Date.now() });
        } catch (error) {
          ctx.logger.warn({ err: error }, 'progress update failed');
        }
      },
    };

    try {
      const result = await Promise.race([processor(payload, ctx), abort.forced]);
      const [log, fields] = outcome({ durationMs: Date.now() - started });
      log.info(fields, 'job completed');
      return result;
    } catch (error) {
      const durationMs = Date.now() - started;
      const retryable = isFleetError(error) ? error.retryable : true;
      const willRetry = retryable && attempt < maxAttempts;
      const [log, fields] = outcome({ err: error, durationMs, retryable, willRetry });
      log.error(fields, `job failed (attempt ${attempt} of ${maxAttempts})`);
      if (!retryable) throw new UnrecoverableError(encodeFailure(error));
      throw new Error(encodeFailure(error), { cause: error });
    } finally {
      abort.dispose();
    }
  };
}
