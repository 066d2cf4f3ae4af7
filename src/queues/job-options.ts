/**
 * Default BullMQ job options shared by the queue definitions: jittered exponential backoff and
 * retention bounded by both count and age, so Redis memory stays flat under load.
 */
import type { JobsOptions } from 'bullmq';

const HOUR_S = 3_600;

/** Finished-job retention: keep recent completions for inspection, failures for a week. */
export const RETENTION = Object.freeze({
  removeOnComplete: { age: HOUR_S, count: 1_000 },
  removeOnFail: { age: 7 * 24 * HOUR_S, count: 5_000 },
});

/** Job options with `attempts` tries and exponential backoff starting at `baseDelayMs` (±50 % jitter). */
export function retryingJob(attempts: number, baseDelayMs: number): JobsOptions {
  return {
    attempts,
    backoff: { type: 'exponential', delay: baseDelayMs, jitter: 0.5 },
    ...RETENTION,
  };
}
