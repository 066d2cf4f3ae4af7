/**
 * The hash of fleet-wide metric counters and histogram buckets (field names: metrics/metric-fields.ts):
 * every process adds its batches of increments, `/metrics` reads the whole hash.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';

export type MetricIncrement = readonly [field: string, by: number];

export class MetricsHash {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** Adds a batch of increments in one pipeline (HINCRBYFLOAT for fractional ones). */
  async add(batch: readonly MetricIncrement[]): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const [field, by] of batch) {
      if (Number.isInteger(by)) pipeline.hincrby(this.keys.metrics(), field, by);
      else pipeline.hincrbyfloat(this.keys.metrics(), field, by);
    }
    await pipeline.exec();
  }

  /** Every field and its value. */
  async read(): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keys.metrics());
  }
}
