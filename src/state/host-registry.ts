/**
 * Hosts of the local provider. Every process serving a host's persist queue (and with it the
 * host's `hostops` queue) heartbeats the host as a *sandbox host* with its capacity and its count
 * of running sandboxes; a sandbox host silent for three intervals is dead, and its workspaces are
 * treated as gone (rebuilt elsewhere from the archive on next use). New local sandboxes go to the
 * least-loaded live sandbox host. Remote providers have no hosts.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';

export class HostRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
    private readonly intervalMs: number,
  ) {}

  /**
   * Whether the host of an incarnation is alive: always for remote providers and for this host
   * (the caller runs on it), else its sandbox-host heartbeat is recent.
   */
  async isAlive(hostId: string, provider: string, selfHostId: string, now = Date.now()): Promise<boolean> {
    if (provider !== 'local' || hostId === selfHostId) return true;
    const score = await this.redis.zscore(this.keys.sandboxHosts(), hostId);
    return score !== null && Number(score) >= now - this.intervalMs * 3;
  }

  /** Heartbeat of a sandbox host with its load (running sandboxes), capacity and isolation mode. */
  async reportSandboxHost(hostId: string, load: { sandboxes?: number; capacity: number; isolation?: string }, now = Date.now()): Promise<void> {
    const fields: Record<string, string> = { capacity: String(load.capacity), seenAt: String(now) };
    if (load.isolation !== undefined) fields.isolation = load.isolation;
    if (load.sandboxes !== undefined) fields.sandboxes = String(load.sandboxes);
    await this.redis.multi().zadd(this.keys.sandboxHosts(), now, hostId).hset(this.keys.host(hostId), fields).exec();
  }

  /** The isolation mode each host last reported (`namespaces` / `none`); hosts that never did are absent. */
  async isolationOf(hostIds: readonly string[]): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const hostId of hostIds) {
      const mode = await this.redis.hget(this.keys.host(hostId), 'isolation');
      if (mode) out[hostId] = mode;
    }
    return out;
  }

  /**
   * The live sandbox host with the lowest load ratio (this host on ties, and when no sandbox host
   * heartbeats), counted as one more sandbox right away so a burst spreads out before the next
   * recount.
   */
  async pickHost(selfHostId: string, now = Date.now()): Promise<string> {
    const live = await this.redis.zrangebyscore(this.keys.sandboxHosts(), now - this.intervalMs * 3, '+inf');
    if (live.length === 0) return selfHostId;
    let best = selfHostId;
    let bestRatio = Number.POSITIVE_INFINITY;
    for (const hostId of live) {
      const [sandboxes, capacity] = await this.redis.hmget(this.keys.host(hostId), 'sandboxes', 'capacity');
      const ratio = Number(sandboxes ?? 0) / Math.max(1, Number(capacity ?? 1));
      if (ratio < bestRatio || (ratio === bestRatio && hostId === selfHostId)) {
        best = hostId;
        bestRatio = ratio;
      }
    }
    await this.redis.hincrby(this.keys.host(best), 'sandboxes', 1);
    return best;
  }
}
