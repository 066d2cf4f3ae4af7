// Reads of the fleet's per-bucket indexes as one, for tests that run in any key layout
// (FLEET_TEST_KEY_LAYOUT): one bucket unless `sharded`.
import type { FleetKeys } from '../../src/keys.js';
import type { RedisClient } from '../../src/redis.js';

/** Every migration record, workspace → JSON, over all buckets. */
export async function migratedRecords(redis: RedisClient, keys: FleetKeys): Promise<Record<string, string>> {
  const all: Record<string, string> = {};
  for (let b = 0; b < keys.buckets; b++) Object.assign(all, await redis.hgetall(keys.migrated(b)));
  return all;
}

/** How many members an index holds over all buckets. */
export async function indexSize(redis: RedisClient, keys: FleetKeys, index: 'unattached' | 'workspaces' | 'overQuota' | 'pendingCreates'): Promise<number> {
  let total = 0;
  for (let b = 0; b < keys.buckets; b++) total += await redis.zcard(keys[index](b));
  return total;
}
