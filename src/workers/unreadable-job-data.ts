/**
 * The data of a job whose stored `data` field is not valid JSON. BullMQ parses that field while
 * building the Job, after the job became active under our lock; `FleetWorker` builds the Job with
 * this marker instead, so the job reaches the processor wrapper and fails through BullMQ's own
 * failure path (with the lock token) instead of stalling forever. No producer can send an
 * instance of this class: job data always comes out of `JSON.parse`.
 */
export class UnreadableJobData {
  constructor(
    /** The stored `data` field as Redis returned it. */
    readonly raw: string,
    /** The parse failure. */
    readonly cause: unknown,
  ) {}

  /**
   * Valid JSON that replaces the stored data once the job fails, so BullMQ can list the failed
   * job (Bull Board, `fleet queues retry-failed`); the raw text is kept, cut to
   * `UNREADABLE_KEPT_CHARS`. A retried quarantined job fails its payload schema without running.
   */
  quarantined(): { unreadableData: string } {
    return { unreadableData: this.raw.length > UNREADABLE_KEPT_CHARS ? `${this.raw.slice(0, UNREADABLE_KEPT_CHARS)}…` : this.raw };
  }
}

/** Characters of unreadable data kept for inspection (enough to diagnose; Bull Board renders it). */
export const UNREADABLE_KEPT_CHARS = 64 * 1024;
