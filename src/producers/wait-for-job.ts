/**
 * Waiting for a job's outcome with a cap: resolves with the return value or rejects with the
 * typed failure decoded from BullMQ's `failedReason`.
 *
 * Not `Job.waitUntilFinished`: BullMQ 6.7 checks the job's state inside an async Promise
 * executor, so a Redis error at that moment (a restart, a command timeout) becomes an unhandled
 * rejection that crashes the process, and that wait never settles. Here the job's events are
 * listened to first, then the state is read, and read again every `pollMs` (a missed event, a
 * reconnect); a failed or hung read is retried on the next poll until the deadline.
 */
import type { EventEmitter } from 'node:events';
import type { Queue, QueueEvents } from 'bullmq';
import { decodeFailure } from '../errors/failure-codec.js';
import { WaitTimeoutError } from '../errors/wait-timeout-error.js';

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

// The outcome of a finished job, or undefined while it is not finished (or unknown).
async function finished(queue: Queue, jobId: string): Promise<Outcome | undefined> {
  const state = await queue.getJobState(jobId);
  if (state !== 'completed' && state !== 'failed') return undefined;
  const job = await queue.getJob(jobId);
  if (!job) return undefined;
  return state === 'completed' ? { ok: true, value: job.returnvalue ?? null } : { ok: false, reason: job.failedReason ?? 'failed' };
}

// One state read may take this long at most: a command caught in a reconnect can hang past its
// own timeout, and a hung read must not outlive the wait's deadline (nor delay the next poll).
const READ_CAP_MS = 5_000;

// `read`'s value, or undefined when it fails or has not answered within `ms`.
function bounded<T>(read: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    read.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

export async function waitForJob<R>(queue: Queue, jobId: string, events: QueueEvents, timeoutMs: number, pollMs = 1_000): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  let outcome: Outcome | undefined;
  let wake = () => undefined as void;
  const onCompleted = ({ returnvalue }: { returnvalue: unknown }) => {
    outcome ??= { ok: true, value: returnvalue };
    wake();
  };
  const onFailed = ({ failedReason }: { failedReason: string }) => {
    outcome ??= { ok: false, reason: failedReason };
    wake();
  };
  // Per-job events (`completed:<id>`), which BullMQ emits but does not type: one listener per
  // waiter instead of every waiter seeing every job's events.
  const emitter = events as unknown as EventEmitter;
  emitter.on(`completed:${jobId}`, onCompleted);
  emitter.on(`failed:${jobId}`, onFailed);
  try {
    for (;;) {
      outcome ??= await bounded(finished(queue, jobId), Math.max(1, Math.min(READ_CAP_MS, deadline - Date.now())));
      if (outcome?.ok) return outcome.value as R;
      if (outcome) throw decodeFailure(queue.name, jobId, outcome.reason);
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeoutError(queue.name, jobId, timeoutMs);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(pollMs, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = () => undefined;
    }
  } finally {
    emitter.off(`completed:${jobId}`, onCompleted);
    emitter.off(`failed:${jobId}`, onFailed);
  }
}
