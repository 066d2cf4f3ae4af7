import { FleetError } from './fleet-error.js';

/** Why a worker cancels a running job. */
export type CancelCause = 'lock lost' | 'shutdown';

/**
 * The reason a running job's signal aborts when its worker cancels it: the job's lock was lost
 * (another worker may run it) or the process is shutting down past its grace period. Retried: the
 * job is finished by the next attempt, here or elsewhere.
 */
export class JobCancelledError extends FleetError {
  readonly code = 'JobCancelled';
  readonly retryable = true;

  constructor(queue: string, jobId: string, why: CancelCause) {
    super(`job ${jobId} on queue ${queue} cancelled: ${why}`, { context: { queue, jobId, why } });
  }
}
