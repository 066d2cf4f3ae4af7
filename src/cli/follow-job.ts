/**
 * Follows a job to its end, feeding its progress reports (`{done, total}`) to a progress bar.
 * A sweep that stopped before its deadline returns `status: 'continued'`; the follower then
 * moves on to the continuation job (the holder of the sweep's dedup id) until one completes.
 */
import type { Queue, QueueEvents } from 'bullmq';
import { waitForJob } from '../producers/wait-for-job.js';
import { RemoteJobError } from '../errors/remote-job-error.js';
import type { ProgressBar } from './progress-bar.js';

export interface FollowOptions {
  readonly queue: Queue;
  readonly events: QueueEvents;
  readonly jobId: string;
  readonly bar: ProgressBar;
  readonly timeoutMs: number;
  /** Dedup id whose holder continues a job that returned `status: 'continued'`. */
  readonly continuationDedupId?: string;
}

/** Renders a job's progress report (`{ done, total }` counts, or a `{ step, percent }` phase) on a bar. */
export function showJobProgress(bar: ProgressBar, data: unknown): void {
  const p = data as { done?: unknown; total?: unknown; percent?: unknown; migrated?: number; failed?: number; step?: unknown } | null;
  if (!p || typeof p !== 'object') return;
  const step = typeof p.step === 'string' ? p.step : undefined;
  const note = p.migrated !== undefined ? `migrated ${p.migrated}, failed ${p.failed ?? 0}` : step;
  if (typeof p.done === 'number') bar.update(p.done, typeof p.total === 'number' ? p.total : undefined, note);
  else if (typeof p.percent === 'number') bar.phase(p.percent, step);
}

export async function followJob<R>({ queue, events, jobId, bar, timeoutMs, continuationDedupId }: FollowOptions): Promise<R> {
  const deadline = Date.now() + timeoutMs;
  let current = jobId;
  const onProgress = ({ jobId: id, data }: { jobId: string; data: unknown }) => {
    if (id === current) showJobProgress(bar, data);
  };
  events.on('progress', onProgress);
  try {
    for (;;) {
      const job = await queue.getJob(current);
      if (!job) throw new RemoteJobError(queue.name, current, 'JobMissing', 'the job no longer exists (removed, or trimmed by retention)');
      showJobProgress(bar, job.progress);
      const result = await waitForJob<R>(queue, current, events, Math.max(1, deadline - Date.now()));
      const next = continuationDedupId && (result as { status?: string } | null)?.status === 'continued' ? await queue.getDeduplicationJobId(continuationDedupId) : null;
      if (!next || next === current) return result;
      current = next;
    }
  } finally {
    events.off('progress', onProgress);
  }
}
