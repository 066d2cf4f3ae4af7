/**
 * What the fleet records about its own work. Worker processes run apart from the `web` process
 * that serves `/metrics`, so the real recorder writes fleet-wide counters into Redis
 * (`RedisMetricsRecorder`); tests and tools that want nothing recorded use `noopMetrics`.
 *
 * Every method settles without throwing: metrics never fail the work they describe.
 */
export type JobOutcome = 'completed' | 'retry' | 'failed';
export type ProviderOutcome = 'ok' | 'busy' | 'gone' | 'permanent' | 'error';
export type LockFailureReason = 'unavailable' | 'lost' | 'release';

export interface RevisionCommitted {
  readonly reason: string;
  readonly bytes: number;
  readonly changedFiles: number;
}

export interface MetricsRecorder {
  /** Writes buffered observations now (shutdown). */
  flush?(): Promise<void>;
  /** One job attempt finished (`retry`: failed, will run again; `failed`: failed for good). */
  jobFinished(queue: string, outcome: JobOutcome, durationMs: number): Promise<void>;
  /** A persist committed a new revision. */
  revisionCommitted(revision: RevisionCommitted): Promise<void>;
  /** A persist run caught the archive up; `lagMs` is how far behind it was. */
  persistCaughtUp(lagMs: number): Promise<void>;
  rsyncExit(code: number): Promise<void>;
  /** Entries of a live tree a persist did not take: refused by a limit, or skipped (devices, sockets). */
  entriesNotTaken(refused: number, skipped: number): Promise<void>;
  lockAcquired(resource: string, waitedMs: number): Promise<void>;
  lockContended(resource: string): Promise<void>;
  lockFailed(resource: string, reason: LockFailureReason): Promise<void>;
  providerCall(provider: string, operation: string, outcome: ProviderOutcome, durationMs: number): Promise<void>;
}

const done = async (): Promise<void> => undefined;

/** Records nothing. */
export const noopMetrics: MetricsRecorder = Object.freeze({
  jobFinished: done,
  revisionCommitted: done,
  persistCaughtUp: done,
  rsyncExit: done,
  entriesNotTaken: done,
  lockAcquired: done,
  lockContended: done,
  lockFailed: done,
  providerCall: done,
});
