/**
 * What each workspace holds against its quota, and which workspaces are over it. The usage is
 * measured by every persist (the revision it committed: files and bytes of the whole tree) and
 * moved by the writes that go through the API between persists; the over-quota set changes in
 * the same script as the usage, so the two never disagree.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';
import { inEveryBucket, lowestScores, sumOverBuckets } from './buckets.js';

export interface QuotaLimits {
  /** 0 = no limit. */
  readonly bytes: number;
  readonly files: number;
}

export interface QuotaUsage {
  readonly bytes: number;
  readonly files: number;
  /** Epoch ms of the measurement (a persist) or of the last API write moving it. */
  readonly measuredAt: number;
}

/** Whether `usage` is above a limit (a limit of 0 is none). */
export const overQuota = (limits: QuotaLimits, usage: Pick<QuotaUsage, 'bytes' | 'files'>): boolean =>
  (limits.bytes > 0 && usage.bytes > limits.bytes) || (limits.files > 0 && usage.files > limits.files);

const RECORD = luaScript(
  'quota-record',
  `-- Sets (mode 'set') or moves (mode 'add') a workspace's usage and keeps the over-quota set in step.
-- KEYS[1] usage hash  KEYS[2] over-quota zset
-- ARGV: mode, bytes, files, now, limitBytes, limitFiles, workspaceId
-- Returns {wasOver, isOver, bytes, files}
local wasOver = redis.call('ZSCORE', KEYS[2], ARGV[7]) and 1 or 0
local bytes, files
if ARGV[1] == 'set' then
  bytes, files = tonumber(ARGV[2]), tonumber(ARGV[3])
else
  bytes = math.max(0, tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0') + tonumber(ARGV[2]))
  files = math.max(0, tonumber(redis.call('HGET', KEYS[1], 'files') or '0') + tonumber(ARGV[3]))
end
redis.call('HSET', KEYS[1], 'bytes', bytes, 'files', files, 'measuredAt', ARGV[4])
local lb, lf = tonumber(ARGV[5]), tonumber(ARGV[6])
local isOver = ((lb > 0 and bytes > lb) or (lf > 0 and files > lf)) and 1 or 0
if isOver == 1 and wasOver == 0 then redis.call('ZADD', KEYS[2], ARGV[4], ARGV[7]) end
if isOver == 0 and wasOver == 1 then redis.call('ZREM', KEYS[2], ARGV[7]) end
return {wasOver, isOver, bytes, files}`,
);

export interface QuotaChange {
  readonly wasOver: boolean;
  readonly isOver: boolean;
  readonly usage: Pick<QuotaUsage, 'bytes' | 'files'>;
}

export class QuotaStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
    readonly limits: QuotaLimits,
  ) {}

  /** The last known usage; null before the first persist or API write. */
  async usage(workspaceId: string): Promise<QuotaUsage | null> {
    const hash = await this.redis.hgetall(this.keys.quotaUsage(workspaceId));
    if (hash.bytes === undefined) return null;
    return { bytes: Number(hash.bytes), files: Number(hash.files ?? 0), measuredAt: Number(hash.measuredAt ?? 0) };
  }

  /** A persist measured the whole tree. */
  measured(workspaceId: string, usage: Pick<QuotaUsage, 'bytes' | 'files'>, now = Date.now()): Promise<QuotaChange> {
    return this.#run('set', workspaceId, usage, now);
  }

  /** An API write or remove moved the usage by `delta` (negative for a removal). */
  moved(workspaceId: string, delta: Pick<QuotaUsage, 'bytes' | 'files'>, now = Date.now()): Promise<QuotaChange> {
    return this.#run('add', workspaceId, delta, now);
  }

  /** Workspaces over quota now, oldest first. */
  async over(limit = 1_000): Promise<string[]> {
    const perBucket = await inEveryBucket(this.keys, (b) => this.redis.zrange(this.keys.overQuota(b), '0', String(limit - 1), 'WITHSCORES'));
    return lowestScores(perBucket, limit);
  }

  async overCount(): Promise<number> {
    return sumOverBuckets(this.keys, (b) => this.redis.zcard(this.keys.overQuota(b)));
  }

  async #run(mode: 'set' | 'add', workspaceId: string, usage: Pick<QuotaUsage, 'bytes' | 'files'>, now: number): Promise<QuotaChange> {
    const [wasOver, isOver, bytes, files] = (await RECORD.run(
      this.redis,
      [this.keys.quotaUsage(workspaceId), this.keys.overQuota(this.keys.bucket(workspaceId))],
      [mode, usage.bytes, usage.files, now, this.limits.bytes, this.limits.files, workspaceId],
    )) as [number, number, number, number];
    return { wasOver: wasOver === 1, isOver: isOver === 1, usage: { bytes: Number(bytes), files: Number(files) } };
  }
}
