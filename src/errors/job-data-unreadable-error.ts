import { FleetError } from './fleet-error.js';

/**
 * Thrown when a job's stored `data` is not valid JSON (a broken producer, or a corrupted hash):
 * no processor can ever read it, so the job fails at once without running. Never retried.
 */
export class JobDataUnreadableError extends FleetError {
  readonly code = 'JobDataUnreadable';
  readonly retryable = false;
  readonly queue: string;
  readonly jobId: string;

  constructor(queue: string, jobId: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`job ${jobId} on queue ${queue}: data is not valid JSON (${reason}); failed without running`, { context: { queue, jobId }, cause });
    this.queue = queue;
    this.jobId = jobId;
  }
}
