/**
 * Reports a persist job that failed for good (including by stalling, where the processor never
 * finished) to the waiters of its own request, and drops its claim. Looks the request up and
 * never merges one: a job that never claimed has nothing in the intent to report.
 */
import { PersistPayload } from '../../queues/persist.js';
import type { PersistIntentStore, PersistJobRef } from '../../state/persist-intent.js';

export async function reportPersistFailure(intents: PersistIntentStore, data: unknown, failedReason: string, job: PersistJobRef): Promise<void> {
  const parsed = PersistPayload.safeParse(data);
  if (!parsed.success || parsed.data.rollbackTo) return;
  const payload = parsed.data;
  const seq =
    payload.requestId !== undefined
      ? await intents.requestSeq(payload.workspaceId, payload.requestId)
      : (payload.requestSeq ?? (await intents.claimedSeq(payload.workspaceId, job)));
  // Covered (or consumed) already: its waiters have their answer.
  if (seq === null) return;
  await intents.fail(payload.workspaceId, seq, failedReason, false, job);
}
