/**
 * Hosts of the local provider: each worker process heartbeats its host (worker-registry.ts);
 * a host that stopped heartbeating for three intervals is dead, and its workspaces are treated
 * as gone (rebuilt elsewhere from the archive on next use). Remote providers have no hosts.
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from '../keys.js';

export class HostRegistry {
  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
    private readonly intervalMs: number,
  ) {}

  /** Hosts that heartbeated within three intervals. */
  async live(now = Date.now()): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.hosts(), now - this.intervalMs * 3, '+inf');
  }

  /** Whether the host of an incarnation is alive (always true for remote providers). */
  async isAlive(hostId: string, provider: string, now = Date.now()): Promise<boolean> {
    if (provider !== 'local') return true;
    const score = await this.redis.zscore(this.keys.hosts(), hostId);
    return score !== null && Number(score) >= now - this.intervalMs * 3;
  }
}
