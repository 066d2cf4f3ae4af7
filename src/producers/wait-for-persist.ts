/**
 * Waiting for one persist request: it is done when a run of its generation that covered its
 * sequence number completed (possibly a coalesced run triggered by another request), and failed
 * when the run that attempted it failed for good, or when a run of a newer generation covered it
 * (`StaleGeneration`: the incarnation whose tree it asked for was replaced before its tree was
 * persisted, so what the archive holds is the restore, not that tree). Wakes on every persist
 * event of the host's queue, with a slow poll as a safety net for a missed event.
 */
import type { QueueEvents } from 'bullmq';
import { decodeFailure } from '../errors/failure-codec.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import { WaitTimeoutError } from '../errors/wait-timeout-error.js';
import type { PersistIntentStore } from '../state/persist-intent.js';

export interface WaitForPersistOptions {
  readonly intents: PersistIntentStore;
  readonly events: QueueEvents;
  readonly workspaceId: string;
  readonly seq: number;
  /** The generation the request was made for. */
  readonly generation: number;
  readonly queue: string;
  readonly jobId: string;
  readonly timeoutMs: number;
  readonly pollMs?: number;
}

export async function waitForPersist<R>({ intents, events, workspaceId, seq, generation, queue, jobId, timeoutMs, pollMs = 1_000 }: WaitForPersistOptions): Promise<R> {
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
      if (status.completedSeq >= seq) {
        const byGeneration = status.completedByGeneration;
        // Runs of a fleet that did not record generations: covered is done, as before.
        if (byGeneration.size === 0 || (byGeneration.get(generation) ?? 0) >= seq) return status.result as R;
        throw new StaleGenerationError(workspaceId, generation, Math.max(...byGeneration.keys()));
      }
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
