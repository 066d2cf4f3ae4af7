/**
 * Registry of base snapshots (issue: base snapshots): entries per snapshot, one active per
 * provider and lane. Provisioning asks only `active()`; activation never touches existing
 * workspaces (their runtime resource keeps its provenance).
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from '../keys.js';

export interface ActiveBase {
  readonly snapshotId: string;
  readonly version: string;
}

export class BaseRegistry {
  constructor(
    protected readonly redis: Redis,
    protected readonly keys: FleetKeys,
  ) {}

  /** Field of the active-bases hash for a provider and lane. */
  static laneField(provider: string, lane: string): string {
    return `${provider}:${lane}`;
  }

  /** The active, ready base of a lane for a provider, or null. */
  async active(lane: string, provider: string): Promise<ActiveBase | null> {
    const id = await this.redis.hget(this.keys.activeBases(), BaseRegistry.laneField(provider, lane));
    if (!id) return null;
    const entry = await this.redis.hmget(this.keys.base(id), 'status', 'version');
    if (entry[0] !== 'ready') return null;
    return { snapshotId: id, version: entry[1] ?? id };
  }
}
