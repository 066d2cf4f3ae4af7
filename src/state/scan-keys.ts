/**
 * Every key matching a glob, on a single server or on every master of a Redis Cluster (a SCAN
 * reaches one node, and the sharded layouts put keys on all of them).
 */
import { Cluster } from 'ioredis';
import type { RedisClient } from '../redis.js';

export async function scanKeys(redis: RedisClient, pattern: string, onKey: (key: string) => void): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, matched] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
      cursor = next;
      for (const key of matched) onKey(key);
    } while (cursor !== '0');
  }
}
