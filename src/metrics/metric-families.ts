/**
 * The fleet-wide metric families that worker processes record into Redis (see
 * `RedisMetricsRecorder`) and `/metrics` reads back: name, help, type, labels and, for
 * histograms, the bucket bounds in seconds. One table, so writers and the reader cannot drift.
 */
export interface RecordedFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly labels: readonly string[];
  /** Upper bounds (seconds) of the buckets; histograms only. */
  readonly buckets?: readonly number[];
}

// Jobs run from tens of milliseconds (a reused provision) to the 30-minute bake deadline.
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
// G3 promises at most 30 s behind while active; the tail shows idle gaps up to the reap TTL.
const LAG_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 900, 3600];
// Provider calls: local file operations (ms) up to remote snapshot polling (minutes).
const CALL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export const RECORDED_FAMILIES = {
  jobs: { name: 'fleet_jobs_total', help: 'Job attempts finished, by BullMQ queue and outcome (completed, retry, failed)', type: 'counter', labels: ['queue', 'outcome'] },
  jobDuration: { name: 'fleet_job_duration_seconds', help: 'Duration of job attempts, by BullMQ queue and outcome', type: 'histogram', labels: ['queue', 'outcome'], buckets: JOB_BUCKETS },
  revisions: { name: 'fleet_revisions_committed_total', help: 'Archive revisions committed, by persist reason', type: 'counter', labels: ['reason'] },
  revisionBytes: { name: 'fleet_revision_bytes_total', help: 'Logical bytes of committed revisions (unchanged files are hard-linked, not copied)', type: 'counter', labels: ['reason'] },
  revisionFiles: { name: 'fleet_revision_changed_files_total', help: 'Files copied into committed revisions (changed since the previous revision)', type: 'counter', labels: ['reason'] },
  persistLag: { name: 'fleet_persist_lag_seconds', help: 'Persist lag closed by each successful persist run (time since the archive last caught up)', type: 'histogram', labels: [], buckets: LAG_BUCKETS },
  rsyncExits: { name: 'fleet_rsync_exits_total', help: 'rsync runs (restores of archive revisions into live trees) by exit code (0 ok, 23 partial, 30/35 timeouts, ...)', type: 'counter', labels: ['code'] },
  persistRefused: { name: 'fleet_persist_refused_entries_total', help: 'Live-tree entries a persist refused by a tree limit (too deep, path too long, too many, too large, unreadable); they keep their archived state', type: 'counter', labels: [] },
  persistSkipped: { name: 'fleet_persist_skipped_entries_total', help: 'Device nodes and sockets in live trees, never archived', type: 'counter', labels: [] },
  lockAcquired: { name: 'fleet_lock_acquisitions_total', help: 'Single-flight locks acquired, by resource kind', type: 'counter', labels: ['kind'] },
  lockContended: { name: 'fleet_lock_contentions_total', help: 'Single-flight acquisitions refused because another worker held the lock', type: 'counter', labels: ['kind'] },
  lockFailed: { name: 'fleet_lock_failures_total', help: 'Single-flight failures: unavailable (no answer / implausible validity), lost (extension failed or hold too long), release', type: 'counter', labels: ['kind', 'reason'] },
  lockWait: { name: 'fleet_lock_wait_seconds', help: 'Time to acquire a single-flight lock', type: 'histogram', labels: ['kind'], buckets: CALL_BUCKETS },
  providerCalls: { name: 'fleet_provider_calls_total', help: 'Sandbox provider calls by provider, operation and outcome (ok, busy, gone, permanent, error)', type: 'counter', labels: ['provider', 'operation', 'outcome'] },
  providerDuration: { name: 'fleet_provider_call_duration_seconds', help: 'Duration of sandbox provider calls', type: 'histogram', labels: ['provider', 'operation'], buckets: CALL_BUCKETS },
} as const satisfies Record<string, RecordedFamily>;

export type RecordedFamilyKey = keyof typeof RECORDED_FAMILIES;
