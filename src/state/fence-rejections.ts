/**
 * The fleet-wide count of writes refused by the generation fence (stale incarnations), in the
 * counters hash: every store whose fenced write is refused counts it, `fleet status` and
 * `/metrics` report it.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';

const FIELD = 'fenceRejections';

/** Counts one write refused by the generation fence. */
export async function countFenceRejection(redis: RedisClient, keys: FleetKeys): Promise<void> {
  await redis.hincrby(keys.counters(), FIELD, 1);
}

/** Writes refused by the generation fence since the fleet started. */
export async function readFenceRejections(redis: RedisClient, keys: FleetKeys): Promise<number> {
  return Number((await redis.hget(keys.counters(), FIELD)) ?? 0);
}
