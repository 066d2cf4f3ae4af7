/**
 * One job as an app pod sees it (`GET /v1/jobs/{queue}/{id}`): its state, progress, result, or its
 * failure decoded into the fleet's typed error (code, message, retry intent). Timestamps ISO 8601.
 */
import type { Queue } from 'bullmq';
import { decodeFailure } from '../errors/failure-codec.js';
import { JobNotFoundError } from '../errors/job-not-found-error.js';

export interface JobView {
  readonly queue: string;
  readonly jobId: string;
  readonly name: string;
  readonly state: string;
  readonly progress: unknown;
  readonly attemptsMade: number;
  readonly result: unknown;
  readonly failure: { readonly code: string; readonly message: string; readonly retryable: boolean } | null;
  readonly createdAt: string;
  readonly processedAt: string | null;
  readonly finishedAt: string | null;
}

const iso = (ms: number | undefined): string | null => (ms ? new Date(ms).toISOString() : null);

export async function jobView(queue: Pick<Queue, 'name' | 'getJob' | 'getJobState'>, jobId: string): Promise<JobView> {
  // The state first, then the job: a job that finished in between shows a finished job's fields
  // under its earlier state, never `completed` without its result.
  const state = await queue.getJobState(jobId);
  const job = await queue.getJob(jobId);
  if (!job || state === 'unknown') throw new JobNotFoundError(queue.name, jobId);
  // A failed job, or one waiting to retry after a failed attempt, shows its (last) failure.
  const failure = state === 'failed' || (state !== 'completed' && job.failedReason) ? decodeFailure(queue.name, jobId, job.failedReason) : null;
  return {
    queue: queue.name,
    jobId,
    name: job.name,
    state,
    progress: job.progress ?? null,
    attemptsMade: job.attemptsMade,
    result: job.returnvalue ?? null,
    failure: failure ? { code: failure.code, message: failure.message, retryable: failure.retryable } : null,
    createdAt: iso(job.timestamp)!,
    processedAt: iso(job.processedOn),
    finishedAt: iso(job.finishedOn),
  };
}
