/**
 * Installs a workspace's checkpoint scheduler unless the one installed is already the same.
 *
 * Every provision (a warm reuse included) makes sure the workspace checkpoints. BullMQ 6.7's
 * `upsertJobScheduler` rewrites the scheduler and removes and re-adds its next job on every call:
 * measured with MONITOR, about 25 Redis commands of a warm reuse's 122 (and a job number taken
 * from the queue's counter each time). So the scheduler is read first. When it carries the same
 * data (workspace, generation) and interval, and its next job is still queued, nothing is
 * written. Anything else (no scheduler, another generation or interval, a next job gone missing)
 * is upserted as before, which also repairs a scheduler that lost its next job.
 */
import type { JobsOptions, Queue } from 'bullmq';

export interface CheckpointTemplate {
  readonly name: string;
  readonly data: { readonly workspaceId: string; readonly generation: number };
  readonly opts: Omit<JobsOptions, 'jobId' | 'repeat' | 'delay' | 'deduplication'>;
}

// BullMQ's id of a scheduler's job for the iteration at `next` (job-scheduler.js).
const iterationJobId = (schedulerId: string, next: number) => `repeat:${schedulerId}:${next}`;

const QUEUED = new Set(['waiting', 'delayed', 'prioritized', 'active', 'waiting-children']);

/** Whether the installed scheduler is the one asked for, with its next iteration queued. */
export async function schedulerCurrent(queue: Queue, schedulerId: string, everyMs: number, template: CheckpointTemplate): Promise<boolean> {
  const existing = await queue.getJobScheduler(schedulerId);
  if (!existing || existing.every !== everyMs || existing.next === undefined) return false;
  const data = existing.template?.data as Partial<CheckpointTemplate['data']> | undefined;
  if (data?.workspaceId !== template.data.workspaceId || data?.generation !== template.data.generation) return false;
  return QUEUED.has(await queue.getJobState(iterationJobId(schedulerId, existing.next)));
}

/** Upserts the scheduler unless `schedulerCurrent`; true when it wrote. */
export async function ensureCheckpointScheduler(queue: Queue, schedulerId: string, everyMs: number, template: CheckpointTemplate): Promise<boolean> {
  if (await schedulerCurrent(queue, schedulerId, everyMs, template)) return false;
  await queue.upsertJobScheduler(schedulerId, { every: everyMs }, template);
  return true;
}
