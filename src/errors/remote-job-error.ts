import { FleetError } from './fleet-error.js';

export interface RemoteJobErrorOptions {
  /** The worker's retry intent; unknown (a reason written before it was carried, a stall) is `false`. */
  readonly retryable?: boolean;
  /** The worker's context, as it was (the job is in `queue`, `jobId` and `remoteJob`). */
  readonly context?: Readonly<Record<string, unknown>>;
}

/**
 * A job failed in a worker with an error this process cannot rebuild as its own class (one of
 * another layer, a foreign error, a reason from before failures were structured, BullMQ's stall
 * reason, or a job that vanished). Carries the worker's code and, when the reason had them, its
 * retry intent and context (see `decodeFailure`).
 */
export class RemoteJobError extends FleetError {
  readonly code: string;
  readonly retryable: boolean;
  readonly queue: string;
  readonly jobId: string;

  constructor(queue: string, jobId: string, code: string, message: string, options: RemoteJobErrorOptions = {}) {
    super(message, { context: options.context ?? {}, remoteJob: { queue, jobId } });
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.queue = queue;
    this.jobId = jobId;
  }
}
