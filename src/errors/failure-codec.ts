/**
 * The wire format of job failures: the worker stores `"<code>: <message>"` as BullMQ's
 * `failedReason`, and clients turn it back into a typed `RemoteJobError` here, in one place.
 */
import { isFleetError } from './fleet-error.js';
import { RemoteJobError } from './remote-job-error.js';

const CODED = /^([A-Z][A-Za-z0-9]*): ([\s\S]*)$/;
// BullMQ's own reason for a job that stalled more than maxStalledCount times.
const BULLMQ_STALLED = 'job stalled more than allowable limit';

/** Encodes an error for `failedReason`. Non-fleet errors get the code `Unexpected`. */
export function encodeFailure(error: unknown): string {
  if (isFleetError(error)) return `${error.code}: ${error.message}`;
  const message = error instanceof Error ? error.message : String(error);
  return `Unexpected: ${message}`;
}

/** Decodes a `failedReason` back into a typed error. */
export function decodeFailure(queue: string, jobId: string, failedReason: string | undefined): RemoteJobError {
  const reason = failedReason ?? '';
  if (reason.startsWith(BULLMQ_STALLED)) return new RemoteJobError(queue, jobId, 'Stalled', reason);
  const match = CODED.exec(reason);
  if (match) return new RemoteJobError(queue, jobId, match[1]!, match[2]!);
  return new RemoteJobError(queue, jobId, 'JobFailed', reason || 'job failed without a reason');
}
