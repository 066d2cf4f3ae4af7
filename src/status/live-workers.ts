/** The worker processes that heartbeated within three intervals, with what they serve. */
import type { Redis } from 'ioredis';
import type { FleetKeys } from '../keys.js';

export interface LiveWorker {
  readonly id: string;
  readonly hostId: string;
  readonly pid: number;
  readonly queues: readonly string[];
  /** ms since its last heartbeat. */
  readonly seenAgoMs: number;
}

export async function listLiveWorkers(redis: Redis, keys: FleetKeys, intervalMs: number, now = Date.now()): Promise<LiveWorker[]> {
  const entries = await redis.zrangebyscore(keys.workers(), now - intervalMs * 3, '+inf', 'WITHSCORES');
  const workers: LiveWorker[] = [];
  for (let i = 0; i < entries.length; i += 2) {
    const id = entries[i]!;
    const info = await redis.hgetall(`${keys.workers()}:${id}`);
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
