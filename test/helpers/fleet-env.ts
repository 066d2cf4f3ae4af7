// Per-test configuration: a fresh key prefix, a fresh FLEET_HOME and short intervals.
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addCleanup } from './cleanup.js';
import { removeTree } from '../../src/tree/remove-tree.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createRedis, type RedisClient } from '../../src/redis.js';
import { testRedisUrl } from './test-redis-url.js';

export { testRedisUrl } from './test-redis-url.js';

/** A unique hash-tagged prefix, so tests never share keys. */
export const uniquePrefix = (): string => `{t-${randomUUID().slice(0, 12)}}`;

/** A temporary directory removed when the test finishes. */
export async function tempDir(label = 'fleet'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `${label}-`));
  addCleanup(async () => {
    // By handles: trees deeper than PATH_MAX (hostile-tree tests) defeat Node's fs.rm.
    await removeTree(dir).catch(() => undefined);
  });
  return dir;
}

/** Environment of a test fleet (also passed to child processes). */
export async function testEnv(overrides: Record<string, string> = {}): Promise<Record<string, string>> {
  const home = await tempDir('fleet-home');
  return {
    REDIS_URL: testRedisUrl(),
    FLEET_PREFIX: uniquePrefix(),
    FLEET_HOME: home,
    FLEET_LOG_LEVEL: 'warn',
    FLEET_LOCK_DURATION_MS: '2000',
    FLEET_STALLED_INTERVAL_MS: '1000',
    FLEET_HEARTBEAT_INTERVAL_MS: '500',
    FLEET_SHUTDOWN_GRACE_MS: '10000',
    FLEET_SHUTDOWN_FLUSH_MS: '0',
    // The whole suite can run against either archive format (`FLEET_TEST_ARCHIVE_FORMAT=2 npm test`).
    ...(process.env.FLEET_TEST_ARCHIVE_FORMAT ? { FLEET_ARCHIVE_FORMAT: process.env.FLEET_TEST_ARCHIVE_FORMAT } : {}),
    // And in any key layout (`FLEET_TEST_KEY_LAYOUT=sharded npm test`: on one server, every reader must still find what is in another bucket).
    ...(process.env.FLEET_TEST_KEY_LAYOUT ? { FLEET_REDIS_KEY_LAYOUT: process.env.FLEET_TEST_KEY_LAYOUT } : {}),
    ...overrides,
  };
}

/** A parsed config for a test environment. */
export async function testConfig(overrides: Record<string, string> = {}): Promise<{ config: Config; env: Record<string, string> }> {
  const env = await testEnv(overrides);
  return { config: loadConfig(env), env };
}

/** A client-role connection closed when the test finishes. */
export function testConnection(config: Config, role: 'client' | 'worker' = 'client'): RedisClient {
  const redis = createRedis({ target: config.redis, role, commandTimeoutMs: 5_000, name: 'test' });
  addCleanup(() => {
    redis.disconnect();
  });
  return redis;
}
