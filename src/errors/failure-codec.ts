/**
 * How a job failure crosses BullMQ, whose `failedReason` is one string. The worker writes
 *
 *   StaleGeneration: workspace ws: generation 1 is stale (current 2)
 *   fleet-failure/1 {"code":"StaleGeneration","name":"StaleGenerationError","message":...,"retryable":false,"context":{...}}
 *
 * The human `Code: message` first stays first, so Bull Board, `fleet` listings and logs read as
 * before; the marked last line carries the structured form (`FailureWire`). A whole-JSON reason
 * would have made every failure in Bull Board an escaped blob. Callers decode here, in one place:
 * a structured reason becomes the class the worker threw, and reasons written before it existed
 * (`Code: message`), BullMQ's own stall reason and anything else become a `RemoteJobError`.
 * Decoding never throws.
 */
import { capText } from './bound-context.js';
import type { FleetError } from './fleet-error.js';
import { FAILURE_CODE, FailureWire, MAX_FAILURE_MESSAGE, toFailureWire } from './failure-wire.js';
import { RemoteJobError } from './remote-job-error.js';
import { reviveFailure } from './revive-failure.js';

/** Starts the line of a reason that carries the structured failure; the `/1` versions its shape. */
export const FAILURE_MARK = 'fleet-failure/1 ';
// An encoded failure is at most a few tens of KiB (message and context are capped); longer is not ours.
const MAX_WIRE_JSON = 64 * 1024;
const CODED = /^([A-Z][A-Za-z0-9]*): ([\s\S]*)$/;
// BullMQ's own reason for a job that stalled more than maxStalledCount times.
const BULLMQ_STALLED = 'job stalled more than allowable limit';

/** The human line of a failure, `"<code>: <message>"` (bounded), for records that show it as text. */
export function describeFailure(error: unknown): string {
  const wire = toFailureWire(error);
  return `${wire.code}: ${wire.message}`;
}

/** Encodes an error for `failedReason`. Errors the fleet did not create get the code `Unexpected`. */
export function encodeFailure(error: unknown): string {
  const wire = toFailureWire(error);
  return `${wire.code}: ${wire.message}\n${FAILURE_MARK}${JSON.stringify(wire)}`;
}

// The structured failure on the marked last line of `reason`, with the text before it.
function splitStructured(reason: string): { text: string; wire: FailureWire | null } {
  const at = reason.lastIndexOf(`\n${FAILURE_MARK}`);
  if (at < 0) return { text: reason, wire: null };
  const text = reason.slice(0, at);
  const json = reason.slice(at + 1 + FAILURE_MARK.length);
  if (json.length > MAX_WIRE_JSON) return { text, wire: null };
  try {
    const parsed = FailureWire.safeParse(JSON.parse(json));
    return { text, wire: parsed.success ? parsed.data : null };
  } catch {
    return { text, wire: null };
  }
}

/** Decodes a `failedReason` of job `jobId` on `queue` back into a typed error; never throws. */
export function decodeFailure(queue: string, jobId: string, failedReason: string | undefined | null): FleetError {
  const { text, wire } = splitStructured(failedReason ?? '');
  if (wire) return reviveFailure(wire, { queue, jobId });
  const reason = capText(text, MAX_FAILURE_MESSAGE);
  if (reason.startsWith(BULLMQ_STALLED)) return new RemoteJobError(queue, jobId, 'Stalled', reason);
  const match = CODED.exec(reason);
  if (match && match[1]!.length <= 64 && FAILURE_CODE.test(match[1]!)) return new RemoteJobError(queue, jobId, match[1]!, match[2]!);
  return new RemoteJobError(queue, jobId, 'JobFailed', reason || 'job failed without a reason');
}
