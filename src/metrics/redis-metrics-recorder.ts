/**
 * `MetricsRecorder` over one Redis hash under the fleet's hash-tagged prefix: each observation is
 * one pipelined batch of HINCRBY / HINCRBYFLOAT (see metric-fields.ts). Write errors are logged
 * at debug level and swallowed: a Redis hiccup loses a sample, never a job.
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from '../keys.js';
import type { Logger } from '../logger.js';
import { RECORDED_FAMILIES, type RecordedFamily } from './metric-families.js';
import { bucketField, bucketFor, counterField, sumField, type Labels } from './metric-fields.js';
import type { JobOutcome, LockFailureReason, MetricsRecorder, ProviderOutcome, RevisionCommitted } from './metrics-recorder.js';

type Increment = readonly [field: string, by: number];

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
  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
    private readonly logger?: Logger,
  ) {}

  async #write(increments: readonly Increment[]): Promise<void> {
    try {
      const pipeline = this.redis.pipeline();
      for (const [field, by] of increments) {
        if (Number.isInteger(by)) pipeline.hincrby(this.keys.metrics(), field, by);
        else pipeline.hincrbyfloat(this.keys.metrics(), field, by);
      }
      await pipeline.exec();
    } catch (error) {
      this.logger?.debug({ err: error }, 'metrics write failed (sample dropped)');
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
