/**
 * The address store: workspace → the one authoritative incarnation
 * `{ handle, generation, hostId, provider, publishedAt }`, plus the workspace's generation
 * counter. Generations only ever increase; an address is published by compare-and-set against
 * the counter, so a replaced incarnation can never publish over its successor.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';
import { countFenceRejection } from './fence-rejections.js';
import { inEveryBucket, lowestScores, perWorkspace } from './buckets.js';

export type ProviderName = 'local' | 'vercel';

export interface Address {
  readonly workspaceId: string;
  readonly handle: string;
  readonly generation: number;
  readonly hostId: string;
  readonly provider: ProviderName;
  readonly publishedAt: number;
}

const BUMP = luaScript(
  'bump-generation',
  `-- Bumps a workspace generation to max(stored, floor) + 1 before a replacement starts.
-- KEYS[1] generation counter   ARGV[1] floor (highest generation recorded in the archive)
-- Returns the new generation.
local stored = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
local nextGen = math.max(stored, floor) + 1
redis.call('SET', KEYS[1], nextGen)
return nextGen`,
);

const CLAIM_COLD = luaScript(
  'claim-cold',
  `-- Claims a workspace that has no live incarnation for a cold write: bumps its generation, so a
-- provision already under way (its generation now stale) cannot publish, and the write's attach
-- is fenced on the new one. Refused while an address is published (the write goes warm).
-- KEYS[1] generation counter  KEYS[2] address hash   ARGV[1] floor (highest generation in the archive)
-- Returns the new generation, or -1 when an address is published.
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
local stored = tonumber(redis.call('GET', KEYS[1]) or '0')
local nextGen = math.max(stored, tonumber(ARGV[1])) + 1
redis.call('SET', KEYS[1], nextGen)
return nextGen`,
);

const PUBLISH = luaScript(
  'publish-address',
  `-- Publishes an incarnation if its generation is still the workspace's newest.
-- KEYS[1] generation counter  KEYS[2] address hash  KEYS[3] workspaces index
-- ARGV: generation, handle, hostId, provider, publishedAt, workspaceId
-- Returns 1 when published, 0 when a newer generation exists (the caller lost the race).
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], 'generation', ARGV[1], 'handle', ARGV[2], 'hostId', ARGV[3], 'provider', ARGV[4], 'publishedAt', ARGV[5])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[6])
return 1`,
);

const UNPUBLISH = luaScript(
  'unpublish-address',
  `-- Removes an address only if it still names the given generation.
-- KEYS[1] address hash   ARGV[1] generation
-- Returns 1 when removed, 0 otherwise.
if redis.call('HGET', KEYS[1], 'generation') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`,
);

export class AddressStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** The published address, or `null` when the workspace has no live incarnation. */
  async get(workspaceId: string): Promise<Address | null> {
    const hash = await this.redis.hgetall(this.keys.address(workspaceId));
    if (!hash.handle || !hash.generation) return null;
    return {
      workspaceId,
      handle: hash.handle,
      generation: Number(hash.generation),
      hostId: hash.hostId ?? 'local',
      provider: (hash.provider as ProviderName) ?? 'local',
      publishedAt: Number(hash.publishedAt ?? 0),
    };
  }

  /** When each workspace's address was published (null without a live incarnation), in the order given: one pipeline. */
  async publishedAtOf(workspaceIds: readonly string[]): Promise<(number | null)[]> {
    const replies = await perWorkspace<string | null>(this.redis, this.keys, workspaceIds, (pipeline, ws) => pipeline.hget(this.keys.address(ws), 'publishedAt'));
    return replies.map((publishedAt) => (publishedAt ? Number(publishedAt) : null));
  }

  /** The workspace's newest generation (0 if it never had one). */
  async generation(workspaceId: string): Promise<number> {
    return Number((await this.redis.get(this.keys.generation(workspaceId))) ?? 0);
  }

  /** Bumps the generation to `max(stored, archiveFloor) + 1` and returns it. */
  async bumpGeneration(workspaceId: string, archiveFloor = 0): Promise<number> {
    return Number(await BUMP.run(this.redis, [this.keys.generation(workspaceId)], [archiveFloor]));
  }

  /**
   * Claims the workspace for a cold write when no incarnation is published: the new generation
   * (max(stored, archiveFloor) + 1), or null when an address is published (write warm instead).
   */
  async claimCold(workspaceId: string, archiveFloor = 0): Promise<number | null> {
    const result = Number(await CLAIM_COLD.run(this.redis, [this.keys.generation(workspaceId), this.keys.address(workspaceId)], [archiveFloor]));
    return result < 0 ? null : result;
  }

  /** Compare-and-set publish; `false` means a newer generation exists and the caller must destroy its sandbox. */
  async publish(address: Omit<Address, 'publishedAt'> & { publishedAt?: number }): Promise<boolean> {
    const publishedAt = address.publishedAt ?? Date.now();
    const result = await PUBLISH.run(
      this.redis,
      [this.keys.generation(address.workspaceId), this.keys.address(address.workspaceId), this.#index(address.workspaceId)],
      [address.generation, address.handle, address.hostId, address.provider, publishedAt, address.workspaceId],
    );
    return result === 1;
  }

  /** Adds a workspace to the activity index unless it is there already (its last activity stays). */
  async remember(workspaceId: string, at = Date.now()): Promise<void> {
    await this.redis.zadd(this.#index(workspaceId), 'NX', at, workspaceId);
  }

  /** Records activity (provision, exec, turn end): the idle reaper reaps workspaces without any. */
  async touch(workspaceId: string, at = Date.now()): Promise<void> {
    await this.redis.zadd(this.#index(workspaceId), 'GT', at, workspaceId);
  }

  /** Epoch ms of the workspace's last recorded activity (null when it is not in the index). */
  async lastActivity(workspaceId: string): Promise<number | null> {
    const score = await this.redis.zscore(this.#index(workspaceId), workspaceId);
    return score === null ? null : Number(score);
  }

  /** Every workspace in the activity index (published, touched or given a sandbox), sorted by id. */
  async known(): Promise<string[]> {
    return (await inEveryBucket(this.keys, (b) => this.redis.zrange(this.keys.workspaces(b), '0', '-1'))).flat().sort();
  }


  /** Workspaces whose last activity is older than `before` (epoch ms). */
  async idleSince(before: number, limit = 1_000): Promise<string[]> {
    const perBucket = await inEveryBucket(this.keys, (b) => this.redis.zrangebyscore(this.keys.workspaces(b), '-inf', `(${before}`, 'WITHSCORES', 'LIMIT', 0, limit));
    return lowestScores(perBucket, limit);
  }

  // The workspaces index the workspace's scripts write (its bucket's).
  #index(workspaceId: string): string {
    return this.keys.workspaces(this.keys.bucket(workspaceId));
  }

  /** Counts a write refused by the generation fence (reported by `fleet status`). */
  async countFenceRejection(): Promise<void> {
    await countFenceRejection(this.redis, this.keys);
  }

  /** Removes the address if it still names `generation` (sandbox stopped or gone). */
  async unpublish(workspaceId: string, generation: number): Promise<boolean> {
    return (await UNPUBLISH.run(this.redis, [this.keys.address(workspaceId)], [generation])) === 1;
  }
}
