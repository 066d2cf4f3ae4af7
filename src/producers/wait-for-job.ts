/**
 * Waiting for a job's outcome with a cap: resolves with the return value or rejects with the
 * typed failure decoded from BullMQ's `failedReason`.
 */
import type { Job, QueueEvents } from 'bullmq';
import { decodeFailure } from '../errors/failure-codec.js';
import { WaitTimeoutError } from '../errors/wait-timeout-error.js';
import { withTimeout } from '../runtime/with-timeout.js';

export async function waitForJob<R>(job: Job, events: QueueEvents, timeoutMs: number): Promise<R> {
  const jobId = String(job.id);
  try {
    return (await withTimeout(job.waitUntilFinished(events), timeoutMs, () => new WaitTimeoutError(job.queueName, jobId, timeoutMs))) as R;
  } catch (error) {
    if (error instanceof WaitTimeoutError) throw error;
    throw decodeFailure(job.queueName, jobId, error instanceof Error ? error.message : String(error));
  }
}
