/**
 * `MetricsRecorder` over the metrics hash (state/metrics-hash.ts), one Redis hash under the fleet's hash-tagged prefix. Observations are
 * summed in memory and written as one pipelined batch of HINCRBY / HINCRBYFLOAT at most every
 * `flushIntervalMs` (see metric-fields.ts): recording costs no Redis round trip on the job's
 * path, and metrics stay fleet-wide within a fraction of a second. Write errors are logged at
 * debug level and swallowed: a Redis hiccup loses a sample, never a job.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import type { Logger } from '../logger.js';
import { MetricsHash, type MetricIncrement } from '../state/metrics-hash.js';
import { RECORDED_FAMILIES, type RecordedFamily } from './metric-families.js';
import { bucketField, bucketFor, counterField, sumField, type Labels } from './metric-fields.js';
import type { JobOutcome, LockFailureReason, MetricsRecorder, ProviderOutcome, RevisionCommitted } from './metrics-recorder.js';

type Increment = MetricIncrement;

const F = RECORDED_FAMILIES;

// The increments of one counter sample.
function count(family: RecordedFamily, labels: Labels, by = 1): Increment[] {
  return [[counterField(family.name, labels), by]];
}

// The increments of one histogram observation (seconds).
function observe(family: RecordedFamily, labels: Labels, seconds: number): Increment[] {
  return [
    [bucketField(family.name, labels, bucketFor(family.buckets ?? [], seconds)), 1],
    [sumField(family.name, labels), seconds],
  ];
}

// Resource kind of a lock (`provision:ws-1` → `provision`), keeping label cardinality bounded.
const lockKind = (resource: string): string => resource.split(':', 1)[0] || 'lock';

export class RedisMetricsRecorder implements MetricsRecorder {
  readonly #pending = new Map<string, number>();
  readonly #hash: MetricsHash;
  #timer: NodeJS.Timeout | null = null;

  constructor(
    redis: RedisClient,
    keys: FleetKeys,
    private readonly logger?: Logger,
    private readonly flushIntervalMs = 250,
  ) {
    this.#hash = new MetricsHash(redis, keys);
  }

  // Adds increments to the pending batch and schedules its flush.
  async #write(increments: readonly Increment[]): Promise<void> {
    for (const [field, by] of increments) this.#pending.set(field, (this.#pending.get(field) ?? 0) + by);
    if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
      this.#timer.unref();
    }
  }

  /** Writes the pending batch now (also called on shutdown). */
  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending];
    this.#pending.clear();
    try {
      await this.#hash.add(batch);
    } catch (error) {
      this.logger?.debug({ err: error }, 'metrics write failed (samples dropped)');
    }
  }

  jobFinished(queue: string, outcome: JobOutcome, durationMs: number): Promise<void> {
    const labels = { queue, outcome };
    return this.#write([...count(F.jobs, labels), ...observe(F.jobDuration, labels, durationMs / 1000)]);
  }

  revisionCommitted({ reason, bytes, changedFiles }: RevisionCommitted): Promise<void> {
    const labels = { reason };
    return this.#write([...count(F.revisions, labels), ...count(F.revisionBytes, labels, bytes), ...count(F.revisionFiles, labels, changedFiles)]);
  }

  persistCaughtUp(lagMs: number): Promise<void> {
    return this.#write(observe(F.persistLag, {}, Math.max(0, lagMs) / 1000));
  }

  rsyncExit(code: number): Promise<void> {
    return this.#write(count(F.rsyncExits, { code: String(code) }));
  }

  entriesNotTaken(refused: number, skipped: number): Promise<void> {
    if (refused + skipped === 0) return Promise.resolve();
    return this.#write([...count(F.persistRefused, {}, refused), ...count(F.persistSkipped, {}, skipped)]);
  }

  lockAcquired(resource: string, waitedMs: number): Promise<void> {
    const kind = lockKind(resource);
    return this.#write([...count(F.lockAcquired, { kind }), ...observe(F.lockWait, { kind }, waitedMs / 1000)]);
  }

  lockContended(resource: string): Promise<void> {
    return this.#write(count(F.lockContended, { kind: lockKind(resource) }));
  }

  lockFailed(resource: string, reason: LockFailureReason): Promise<void> {
    return this.#write(count(F.lockFailed, { kind: lockKind(resource), reason }));
  }

  providerCall(provider: string, operation: string, outcome: ProviderOutcome, durationMs: number): Promise<void> {
    return this.#write([...count(F.providerCalls, { provider, operation, outcome }), ...observe(F.providerDuration, { provider, operation }, durationMs / 1000)]);
  }
}
