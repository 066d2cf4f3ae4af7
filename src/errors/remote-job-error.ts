import { FleetError } from './fleet-error.js';

/**
 * A job failed in a worker. Rebuilt on the client from BullMQ's `failedReason`, whose
 * `"<code>: <message>"` shape is written by the worker runner (see `encodeFailure`).
 */
export class RemoteJobError extends FleetError {
  readonly code: string;
  readonly retryable = false;
  readonly queue: string;
  readonly jobId: string;

  constructor(queue: string, jobId: string, code: string, message: string) {
    super(message, { context: { queue, jobId, remoteCode: code } });
    this.code = code;
    this.queue = queue;
    this.jobId = jobId;
  }
}
