/**
 * What a processor receives besides its validated payload: a job-scoped logger, an
 * `AbortSignal` that fires at the job's deadline (BullMQ has no job timeout) or on cancellation,
 * and progress reporting. Processors are plain functions of `(payload, ctx)`, so tests can call
 * them with an object literal.
 */
import type { Logger } from '../logger.js';

/** A progress report: a step name and, when known, how far along it is. */
export interface Progress {
  readonly step: string;
  /** 0..100 */
  readonly percent?: number;
  readonly done?: number;
  readonly total?: number;
  readonly [extra: string]: unknown;
}

export interface ProcessorContext {
  readonly logger: Logger;
  /** Aborted at the deadline, on cancellation, or when the job's lock is lost. */
  readonly signal: AbortSignal;
  readonly queue: string;
  readonly jobId: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Epoch ms at which `signal` aborts. */
  readonly deadlineAt: number;
  /** Reports progress (visible in Bull Board, `fleet` progress bars and waiters). Never throws. */
  progress(update: Progress): Promise<void>;
}

export type Processor<P = unknown, R = unknown> = (payload: P, ctx: ProcessorContext) => Promise<R>;

/**
 * `ctx` with another signal (one that also fires when a lock is lost, say). Never spread a
 * context instead: the worker's context keeps `logger` and `signal` as getters on its prototype,
 * which a spread drops.
 */
export function withSignal(ctx: ProcessorContext, signal: AbortSignal): ProcessorContext {
  return {
    logger: ctx.logger,
    signal,
    queue: ctx.queue,
    jobId: ctx.jobId,
    attempt: ctx.attempt,
    maxAttempts: ctx.maxAttempts,
    deadlineAt: ctx.deadlineAt,
    progress: (update) => ctx.progress(update),
  };
}
