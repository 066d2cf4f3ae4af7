/**
 * The fleet's BullMQ Worker. BullMQ 6.7 turns the job hash fetched by `moveToActive` (and the
 * next job returned by `moveToFinished`) into a Job with `Worker#createJob` → `Job.fromJSON`,
 * which runs `JSON.parse` on the stored `data`. When that throws, the job is already active
 * under this worker's lock token but nobody tracks it: the error is only emitted, the lock
 * expires, the stalled checker puts it back, and it is fetched (and fails to parse) forever.
 *
 * `createJob` is the factory BullMQ itself calls on both paths, so overriding it is the seam:
 * an unparseable `data` becomes an `UnreadableJobData` marker, the job runs through the normal
 * processing path (lock tracked), and the processor wrapper fails it as unrecoverable, so
 * BullMQ's own `moveToFailed` script finishes it with the lock token.
 */
import { Worker, type Job, type JobJson } from 'bullmq';
import { UnreadableJobData } from './unreadable-job-data.js';

export class FleetWorker extends Worker {
  protected override createJob(json: JobJson, jobId: string): Job {
    try {
      return super.createJob(json, jobId);
    } catch (error) {
      // Job.fromJSON parses nothing but `data` (options and parent were decoded by the backend).
      if (!(error instanceof SyntaxError)) throw error;
      const job = super.createJob({ ...json, data: 'null' }, jobId);
      job.data = new UnreadableJobData(json.data, error);
      return job;
    }
  }
}
