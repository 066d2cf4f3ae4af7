import { FleetError } from './fleet-error.js';

/** Thrown to a caller that waited for a job result longer than its cap. The job keeps running. */
export class WaitTimeoutError extends FleetError {
  readonly code = 'WaitTimeout';
  readonly retryable = true;

  constructor(queue: string, jobId: string, timeoutMs: number) {
    super(`gave up waiting for ${queue} job ${jobId} after ${timeoutMs} ms (the job continues)`, { context: { queue, jobId, timeoutMs } });
  }
}
