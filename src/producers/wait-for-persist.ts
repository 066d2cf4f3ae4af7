/**
 * Waiting for one persist request: it is done when a run that covered its sequence number
 * completed (possibly a coalesced run triggered by another request), and failed when the run
 * that attempted it failed for good. Wakes on every persist event of the host's queue, with a
 * slow poll as a safety net for a missed event.
 */
import type { QueueEvents } from 'bullmq';
import { decodeFailure } from '../errors/failure-codec.js';
import { WaitTimeoutError } from '../errors/wait-timeout-error.js';
import type { PersistIntentStore } from '../state/persist-intent.js';

export interface WaitForPersistOptions {
  readonly intents: PersistIntentStore;
  readonly events: QueueEvents;
  readonly workspaceId: string;
  readonly seq: number;
  readonly queue: string;
  readonly jobId: string;
  readonly timeoutMs: number;
  readonly pollMs?: number;
}

export async function waitForPersist<R>({ intents, events, workspaceId, seq, queue, jobId, timeoutMs, pollMs = 1_000 }: WaitForPersistOptions): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let wake: () => void = () => undefined;
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    events.on('completed', wake);
    events.on('failed', wake);
    try {
      const status = await intents.status(workspaceId);
      if (status.completedSeq >= seq) return status.result as R;
      if (status.failedSeq >= seq) throw decodeFailure(queue, jobId, status.failedReason ?? undefined);
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeoutError(queue, jobId, timeoutMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(pollMs, left));
        void woken.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    } finally {
      events.off('completed', wake);
      events.off('failed', wake);
    }
  }
}
