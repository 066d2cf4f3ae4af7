import { FleetError } from './fleet-error.js';

/** No job with that id in that queue (never added, or removed by the queue's retention). 404. */
export class JobNotFoundError extends FleetError {
  readonly code = 'JobNotFound';
  readonly retryable = false;

  constructor(queue: string, jobId: string) {
    super(`queue ${queue} has no job ${jobId} (never added, or removed by retention)`, { context: { queue, jobId } });
  }
}
