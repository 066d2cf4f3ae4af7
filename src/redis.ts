/**
 * ioredis connection factory: one server (`REDIS_URL`, or the embedded one), or a Redis Cluster
 * (`FLEET_REDIS_CLUSTER_NODES`: ioredis `Cluster`, every role; the fleet's keys and queues share
 * the prefix's hash tag, so every script and pipeline stays in one slot).
 *
 * - `worker`: BullMQ Worker and QueueEvents connections (blocking commands):
 *   `maxRetriesPerRequest: null`, no command timeout, reconnect forever.
 * - `client`: producers, CLI, stores: a command timeout and one retry, so nothing hangs
 *   forever when Redis is stopped.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { ClusterNode } from './config/config-rules.js';
import { typeRedisCommandTimeouts } from './lib/redis-command-timeout.js';
import type { Logger } from './logger.js';

export type ConnectionRole = 'worker' | 'client';

/** A connection to the fleet's Redis: one server, or a Redis Cluster (`FLEET_REDIS_CLUSTER_NODES`). */
export type RedisClient = Redis | Cluster;

/** Where the fleet's Redis is: a URL, or cluster seed nodes (which win). `Config.redis` is one. */
export interface RedisTarget {
  readonly url: string | null;
  readonly clusterNodes: readonly ClusterNode[] | null;
  readonly clusterPassword?: string | null;
}

/** Whether a target names a Redis (embedded mode leaves the URL unset until it is resolved). */
export const redisResolved = (target: RedisTarget): boolean => target.clusterNodes !== null || target.url !== null;

export interface RedisConnectionOptions {
  /** Where to connect: the configuration's target (`Config.redis`), or one server's URL. */
  readonly target?: RedisTarget;
  readonly url?: string;
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
export function createRedis({ target: given, url, role, commandTimeoutMs, name, logger }: RedisConnectionOptions): RedisClient {
  // A command without an answer within commandTimeout fails typed (RedisCommandTimeoutError).
  typeRedisCommandTimeouts();
  const target: RedisTarget = given ?? { url: url ?? null, clusterNodes: null };
  const options: RedisOptions = { ...redisOptions(role, commandTimeoutMs), connectionName: name };
  let redis: RedisClient;
  if (target.clusterNodes !== null) {
    const { lazyConnect, ...perNode } = options;
    redis = new Cluster([...target.clusterNodes], {
      lazyConnect,
      enableReadyCheck: true,
      // Every command goes to the slot's master (BullMQ's scripts write; reads must see them).
      scaleReads: 'master',
      clusterRetryStrategy: retryStrategy,
      // Worker connections wait out a failover; client connections fail within their timeout.
      ...(role === 'worker' ? { maxRedirections: 64, retryDelayOnFailover: 200, retryDelayOnClusterDown: 200 } : { retryDelayOnFailover: 100 }),
      redisOptions: { ...perNode, ...(target.clusterPassword ? { password: target.clusterPassword } : {}) },
    });
  } else {
    if (target.url === null) throw new Error('createRedis: no Redis URL (embedded mode must resolve it first)');
    redis = new Redis(target.url, options);
  }
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
export function redisAddress(redis: RedisClient): string {
  if (redis instanceof Cluster) return `cluster ${clusterAddress(redis.nodes('master').map((node) => node.options))}`;
  const { host, port, path } = redis.options;
  return path ? path : `${host ?? '127.0.0.1'}:${port ?? 6379}`;
}

// The seed nodes of a cluster as `host:port,...`.
function clusterAddress(nodes: readonly unknown[]): string {
  return nodes.map((node) => (typeof node === 'object' && node !== null ? `${(node as ClusterNode).host}:${(node as ClusterNode).port}` : String(node))).join(',');
}

/** Where a target points, for messages: the URL's `host:port` or the cluster's seed nodes. */
export function redisTargetAddress(target: RedisTarget): string | null {
  if (target.clusterNodes !== null) return `cluster ${clusterAddress(target.clusterNodes)}`;
  return target.url === null ? null : redisUrlAddress(target.url);
}

/** Another connection to the same Redis with some per-connection options changed (a blocking reader, say). */
export function duplicateRedis(redis: RedisClient, overrides: Partial<RedisOptions>): RedisClient {
  if (redis instanceof Cluster) {
    const { lazyConnect, ...perNode } = overrides;
    return redis.duplicate(undefined, { ...(lazyConnect === undefined ? {} : { lazyConnect }), redisOptions: { ...redis.options.redisOptions, ...perNode } });
  }
  return redis.duplicate(overrides);
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
export async function closeRedis(redis: RedisClient, timeoutMs = 1_000): Promise<void> {
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
