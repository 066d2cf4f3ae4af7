// The Redis of this file's worker slot (started by global-setup.ts): files that run side by side
// have different slots, so never the same server.
import { inject } from 'vitest';

export function testRedisUrl(): string {
  const urls = inject('redisUrls');
  const slot = Number(process.env.VITEST_POOL_ID ?? '1');
  return urls[(Number.isInteger(slot) && slot >= 1 ? slot - 1 : 0) % urls.length]!;
}
