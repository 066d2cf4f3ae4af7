/**
 * Incarnations being created right now: a provisioner or a bake writes a lease here *before* it
 * asks a provider to create a sandbox, and drops it once the sandbox is published or destroyed.
 * Orphan GC never destroys a sandbox whose workspace and generation hold an unexpired lease, so
 * a sandbox caught between create and publish, or the seed of a bake still running, is safe
 * however old the provider says it is. A lease of a crashed creator simply expires.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { sumOverBuckets } from './buckets.js';

// The member naming one incarnation (workspace ids never contain ':').
const member = (workspaceId: string, generation: number) => `${workspaceId}:g${generation}`;

export class PendingCreateStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** Records that incarnation `generation` of `workspaceId` is being created, for at most `ttlMs`. */
  async begin(workspaceId: string, generation: number, ttlMs: number, now = Date.now()): Promise<void> {
    await this.redis.zadd(this.#key(workspaceId), now + ttlMs, member(workspaceId, generation));
  }

  /** The creation is over (published, destroyed or failed). */
  async end(workspaceId: string, generation: number): Promise<void> {
    await this.redis.zrem(this.#key(workspaceId), member(workspaceId, generation));
  }

  /** Whether the incarnation holds an unexpired lease. */
  async isPending(workspaceId: string, generation: number, now = Date.now()): Promise<boolean> {
    const expiry = await this.redis.zscore(this.#key(workspaceId), member(workspaceId, generation));
    return expiry !== null && Number(expiry) > now;
  }

  /** Drops expired leases (their creators died); returns how many. */
  async prune(now = Date.now()): Promise<number> {
    return sumOverBuckets(this.keys, (b) => this.redis.zremrangebyscore(this.keys.pendingCreates(b), '-inf', String(now)));
  }

  // The leases of the workspace's bucket.
  #key(workspaceId: string): string {
    return this.keys.pendingCreates(this.keys.bucket(workspaceId));
  }
}
