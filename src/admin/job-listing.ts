/**
 * Jobs across the fleet's queues for operators (`fleet jobs list|retry`): newest first, filtered
 * by state and by age, failures decoded into their typed code and message. Listing reads at most
 * `limit` jobs per queue and state; a retry pages through every failed job inside the window.
 */
import type { Job, Queue } from 'bullmq';
import { decodeFailure } from '../errors/failure-codec.js';

export const LISTED_STATES = ['failed', 'completed', 'active', 'waiting', 'prioritized', 'delayed'] as const;
export type ListedState = (typeof LISTED_STATES)[number];

export interface JobSummary {
  readonly queue: string;
  readonly jobId: string;
  readonly name: string;
  readonly state: ListedState;
  readonly workspaceId: string | null;
  readonly attemptsMade: number;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  /** From first processing to the end, for finished jobs. */
  readonly durationMs: number | null;
  readonly failure: { readonly code: string; readonly message: string; readonly retryable: boolean } | null;
}

export interface ListFilter {
  readonly states: readonly ListedState[];
  /** Only jobs whose last event (finish, start or creation) is at or after this time (ms). */
  readonly since: number | null;
  readonly limit: number;
}

const PAGE = 200;

/** The moment a job last moved: its finish, else its start, else its creation. */
export function jobTime(job: Pick<Job, 'finishedOn' | 'processedOn' | 'timestamp'>): number {
  return job.finishedOn ?? job.processedOn ?? job.timestamp;
}

export function summarize(queue: string, state: ListedState, job: Job): JobSummary {
  const workspaceId = (job.data as { workspaceId?: unknown } | null)?.workspaceId;
  const failure = job.failedReason ? decodeFailure(queue, String(job.id), job.failedReason) : null;
  return {
    queue,
    jobId: String(job.id),
    name: job.name,
    state,
    workspaceId: typeof workspaceId === 'string' ? workspaceId : null,
    attemptsMade: job.attemptsMade,
    createdAt: new Date(job.timestamp).toISOString(),
    finishedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    durationMs: job.finishedOn && job.processedOn ? job.finishedOn - job.processedOn : null,
    failure: failure && state !== 'completed' ? { code: failure.code, message: failure.message, retryable: failure.retryable } : null,
  };
}

/** Newest-first summaries of `queues`' jobs in `filter.states`, at most `filter.limit`. */
export async function listJobs(queues: readonly Queue[], filter: ListFilter): Promise<JobSummary[]> {
  const found: { time: number; summary: JobSummary }[] = [];
  for (const queue of queues) {
    for (const state of filter.states) {
      const jobs = (await queue.getJobs([state], 0, filter.limit - 1, false)).filter((j): j is Job => j !== undefined && j !== null);
      for (const job of jobs) {
        const time = jobTime(job);
        if (filter.since !== null && time < filter.since) continue;
        found.push({ time, summary: summarize(queue.name, state, job) });
      }
    }
  }
  return found
    .sort((a, b) => b.time - a.time)
    .slice(0, filter.limit)
    .map((f) => f.summary);
}

export interface RetryOutcome {
  readonly queue: string;
  readonly jobId: string;
  readonly retried: boolean;
}

/**
 * Moves `queue`'s failed jobs that failed at or after `since` back to waiting (all of them when
 * `since` is null), newest first; with `dryRun`, only lists them. A job another client retried
 * or removed meanwhile is reported with `retried: false`.
 */
export async function retryFailed(queue: Queue, since: number | null, dryRun: boolean): Promise<RetryOutcome[]> {
  const outcomes: RetryOutcome[] = [];
  const seen = new Set<string>();
  let start = 0;
  for (;;) {
    const page = (await queue.getJobs(['failed'], start, start + PAGE - 1, false)).filter((j): j is Job => j !== undefined && j !== null);
    if (page.length === 0) break;
    let inWindow = 0;
    let retriedHere = 0;
    for (const job of page) {
      const id = String(job.id);
      if (seen.has(id)) continue;
      seen.add(id);
      if (since !== null && jobTime(job) < since) continue;
      inWindow += 1;
      const retried = dryRun ? false : await job.retry('failed').then(() => true, () => false);
      if (retried) retriedHere += 1;
      outcomes.push({ queue: queue.name, jobId: id, retried });
    }
    // Newest first: a page with nothing inside the window means the rest is older still.
    if (since !== null && inWindow === 0) break;
    if (page.length < PAGE) break;
    // Retried jobs left the failed set: the next page starts after the ones that stayed.
    start += page.length - retriedHere;
  }
  return outcomes;
}
