/**
 * Liveness of worker processes: each registers itself in a sorted set scored by its last
 * heartbeat, with a hash of what it serves, and heartbeats its host into the hosts set;
 * `countLiveWorkers` counts those seen within three intervals. A timer that fails (Redis down)
 * logs and keeps going; it never throws.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import type { Logger } from '../logger.js';

export interface WorkerRegistration {
  readonly id: string;
  stop(): Promise<void>;
}

export interface RegisterWorkerOptions {
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  readonly hostId: string;
  readonly queues: readonly string[];
  readonly intervalMs: number;
  readonly logger: Logger;
}

export interface LiveWorker {
  readonly id: string;
  readonly hostId: string;
  readonly pid: number;
  readonly queues: readonly string[];
  /** ms since its last heartbeat. */
  readonly seenAgoMs: number;
}

/** Registers this process and heartbeats until `stop()`. */
export async function registerWorker({ redis, keys, hostId, queues, intervalMs, logger }: RegisterWorkerOptions): Promise<WorkerRegistration> {
  const id = `${hostId}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const infoKey = keys.worker(id);
  const beat = async () => {
    await redis
      .multi()
      .zadd(keys.workers(), Date.now(), id)
      .zadd(keys.hosts(), Date.now(), hostId)
      .hset(infoKey, { hostId, pid: String(process.pid), queues: queues.join(','), seenAt: String(Date.now()) })
      .pexpire(infoKey, intervalMs * 3)
      .exec();
  };
  await beat();
  const timer = setInterval(() => {
    beat().catch((error: unknown) => logger.warn({ err: error }, 'worker heartbeat failed'));
  }, intervalMs);
  timer.unref();
  return {
    id,
    async stop() {
      clearInterval(timer);
      await redis.multi().zrem(keys.workers(), id).del(infoKey).exec().catch(() => undefined);
    },
  };
}

/** Number of worker processes that heartbeated within three intervals; prunes dead entries. */
export async function countLiveWorkers(redis: RedisClient, keys: FleetKeys, intervalMs: number, now = Date.now()): Promise<number> {
  const cutoff = now - intervalMs * 3;
  await redis.zremrangebyscore(keys.workers(), '-inf', `(${cutoff}`);
  return redis.zcount(keys.workers(), cutoff, '+inf');
}

/** The worker processes that heartbeated within three intervals, with what they serve. */
export async function listLiveWorkers(redis: RedisClient, keys: FleetKeys, intervalMs: number, now = Date.now()): Promise<LiveWorker[]> {
  const entries = await redis.zrangebyscore(keys.workers(), now - intervalMs * 3, '+inf', 'WITHSCORES');
  const workers: LiveWorker[] = [];
  for (let i = 0; i < entries.length; i += 2) {
    const id = entries[i]!;
    const info = await redis.hgetall(keys.worker(id));
    workers.push({
      id,
      hostId: info.hostId ?? id.split(':')[0] ?? '?',
      pid: Number(info.pid ?? 0),
      queues: info.queues ? info.queues.split(',') : [],
      seenAgoMs: Math.max(0, now - Number(entries[i + 1])),
    });
  }
  return workers.sort((a, b) => a.id.localeCompare(b.id));
}

/** Every host a worker ever heartbeated from, least recently seen first. */
export async function registeredHosts(redis: RedisClient, keys: FleetKeys): Promise<string[]> {
  return redis.zrange(keys.hosts(), '0', '-1');
}
