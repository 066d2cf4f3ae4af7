/**
 * Operator actions on one BullMQ queue of the fleet (`fleet queues ...`): pause, resume, drain,
 * retry jobs of a state, clean jobs of a state older than a grace period. Long actions work in
 * bounded batches and report progress after each.
 */
import type { Queue } from 'bullmq';

export const QUEUE_ACTIONS = ['pause', 'resume', 'drain', 'retry-failed', 'clean'] as const;
export type QueueAction = (typeof QUEUE_ACTIONS)[number];

export const RETRY_STATES = ['failed', 'completed'] as const;
export type RetryState = (typeof RETRY_STATES)[number];

/** Jobs handled per round trip (clean's limit, retry's page). */
export const ADMIN_BATCH = 500;

export type OnProgress = (done: number, total: number) => void;

export interface ActionResult {
  readonly queue: string;
  readonly action: QueueAction;
  /** Jobs affected (drain: waiting jobs removed; retry/clean: jobs retried/removed). */
  readonly jobs: number;
  readonly paused: boolean;
}

// Pauses or resumes; reports the resulting state.
export async function setPaused(queue: Queue, paused: boolean): Promise<ActionResult> {
  if (paused) await queue.pause();
  else await queue.resume();
  return { queue: queue.name, action: paused ? 'pause' : 'resume', jobs: 0, paused: await queue.isPaused() };
}

/** Removes waiting (and prioritized) jobs; `delayed` removes delayed ones too. Active jobs run on. */
export async function drainQueue(queue: Queue, delayed: boolean): Promise<ActionResult> {
  const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
  await queue.drain(delayed);
  const jobs = (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (delayed ? (counts.delayed ?? 0) : 0);
  return { queue: queue.name, action: 'drain', jobs, paused: await queue.isPaused() };
}

/** Moves every job of `state` back to waiting, page by page. */
export async function retryJobs(queue: Queue, state: RetryState, onProgress: OnProgress = () => undefined): Promise<ActionResult> {
  const total = await queue.getJobCountByTypes(state);
  let done = 0;
  onProgress(0, total);
  for (;;) {
    const jobs = (await queue.getJobs([state], 0, ADMIN_BATCH - 1)).filter((job) => job !== undefined);
    if (jobs.length === 0) break;
    let moved = 0;
    for (const job of jobs) {
      // A job another client retried or removed meanwhile is not an error.
      if (await job.retry(state).then(() => true, () => false)) moved += 1;
    }
    done += moved;
    onProgress(Math.min(done, Math.max(total, done)), Math.max(total, done));
    if (moved === 0) break;
  }
  return { queue: queue.name, action: 'retry-failed', jobs: done, paused: await queue.isPaused() };
}

/** Removes jobs of `state` finished more than `graceMs` ago, in batches of ADMIN_BATCH. */
export async function cleanJobs(queue: Queue, state: RetryState, graceMs: number, onProgress: OnProgress = () => undefined): Promise<ActionResult> {
  const total = await queue.getJobCountByTypes(state);
  let done = 0;
  onProgress(0, total);
  for (;;) {
    const removed = await queue.clean(graceMs, ADMIN_BATCH, state);
    done += removed.length;
    onProgress(Math.min(done, Math.max(total, done)), Math.max(total, done));
    if (removed.length < ADMIN_BATCH) break;
  }
  return { queue: queue.name, action: 'clean', jobs: done, paused: await queue.isPaused() };
}
