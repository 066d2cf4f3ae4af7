/**
 * ioredis connection factory.
 *
 * - `worker`: BullMQ Worker and QueueEvents connections (blocking commands):
 *   `maxRetriesPerRequest: null`, no command timeout, reconnect forever.
 * - `client`: producers, CLI, stores: a command timeout and one retry, so nothing hangs
 *   forever when Redis is stopped.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

export type ConnectionRole = 'worker' | 'client';

export interface RedisConnectionOptions {
  readonly url: string;
  readonly role: ConnectionRole;
  readonly commandTimeoutMs: number;
  readonly name?: string;
  readonly logger?: Logger;
}

// Reconnect with capped growth: 100 ms, 200 ms ... 2 s.
const retryStrategy = (times: number): number => Math.min(100 * times, 2_000);

/** ioredis options for a role (pure; exported for tests). */
export function redisOptions(role: ConnectionRole, commandTimeoutMs: number): RedisOptions {
  if (role === 'worker') {
    return { maxRetriesPerRequest: null, enableReadyCheck: true, retryStrategy, lazyConnect: true };
  }
  return {
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(commandTimeoutMs, 1_000),
    enableReadyCheck: true,
    retryStrategy,
    lazyConnect: true,
  };
}

/** Creates a connection; call `.connect()` or let the first command connect it. */
export function createRedis({ url, role, commandTimeoutMs, name, logger }: RedisConnectionOptions): Redis {
  const redis = new Redis(url, { ...redisOptions(role, commandTimeoutMs), connectionName: name });
  let lastLogged = 0;
  // ioredis emits 'error' on every failed reconnect; log at most once per 5 s so an outage stays readable.
  redis.on('error', (error: Error) => {
    const now = Date.now();
    if (now - lastLogged > 5_000) {
      lastLogged = now;
      logger?.warn({ err: error, role, connection: name }, 'redis connection error');
    }
  });
  return redis;
}

/** `host:port` (or the socket path) of a connection, for error messages: never its credentials. */
export function redisAddress(redis: Redis): string {
  const { host, port, path } = redis.options;
  return path ? path : `${host ?? '127.0.0.1'}:${port ?? 6379}`;
}

/** `host:port` of a `redis://` URL (credentials dropped), for error messages. */
export function redisUrlAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || '127.0.0.1'}:${parsed.port || '6379'}`;
  } catch {
    return 'an unparsable REDIS_URL';
  }
}

/** A `redis://` URL with its password masked, for what the fleet prints. */
export function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return 'an unparsable REDIS_URL';
  }
}

/** Quits a connection, falling back to disconnect when Redis does not answer in time. */
export async function closeRedis(redis: Redis, timeoutMs = 1_000): Promise<void> {
  if (redis.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.quit().catch(() => undefined),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if ((redis.status as string) !== 'end') redis.disconnect();
  }
}
