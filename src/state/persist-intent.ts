/**
 * The persist intent: the merged, not-yet-covered persist requests of one workspace.
 *
 * BullMQ deduplication drops an add that collides with a waiting job and keeps only the last
 * payload of one that collides with an active job. Either would lose a `delete: true` request
 * merged with a later `delete: false` one. So every request is first merged here (atomically):
 * `delete` and `force` are sticky until a run covers them, the newest `reason`/`turnId` win, the
 * generation is the highest seen, and every request gets a sequence number. A run reads the
 * intent, persists, and then clears exactly what it covered; anything newer stays for the
 * follow-up job that `keepLastIfActive` guarantees.
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';
import type { PersistReason } from '../queues/persist.js';

export interface PersistIntent {
  readonly seq: number;
  readonly delete: boolean;
  /** Sequence number of the newest delete request (0 if none pending). */
  readonly deleteSeq: number;
  readonly force: boolean;
  readonly reason: PersistReason;
  readonly turnId: string | null;
  readonly generation: number;
}

export interface PersistRequest {
  readonly delete: boolean;
  readonly force: boolean;
  readonly reason: PersistReason;
  readonly turnId?: string | undefined;
  readonly generation: number;
}

const MERGE = luaScript(
  'persist-intent-merge',
  `-- Merges one persist request into the workspace's pending intent.
-- KEYS[1] intent hash   KEYS[2] status hash (holds the never-reset request counter)
-- ARGV: delete(0|1), force(0|1), reason, turnId ('' = none), generation
-- Returns the request's sequence number (strictly increasing per workspace).
local seq = redis.call('HINCRBY', KEYS[2], 'lastSeq', 1)
redis.call('HSET', KEYS[1], 'seq', seq)
if ARGV[1] == '1' then redis.call('HSET', KEYS[1], 'delete', 1, 'deleteSeq', seq) end
if ARGV[2] == '1' then redis.call('HSET', KEYS[1], 'force', 1) end
redis.call('HSET', KEYS[1], 'reason', ARGV[3], 'turnId', ARGV[4])
local gen = tonumber(redis.call('HGET', KEYS[1], 'generation') or '0')
if tonumber(ARGV[5]) > gen then redis.call('HSET', KEYS[1], 'generation', ARGV[5]) end
return seq`,
);

const COMPLETE = luaScript(
  'persist-intent-complete',
  `-- Clears what a finished run covered and records its outcome for waiters.
-- KEYS[1] intent hash   KEYS[2] status hash
-- ARGV: coveredSeq, resultJson
-- Returns 1 if the intent was fully covered (deleted), 0 if newer requests remain.
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
local covered = tonumber(ARGV[1])
local t = redis.call('TIME')
redis.call('HSET', KEYS[2], 'completedSeq', covered, 'result', ARGV[2], 'completedAt', t[1] * 1000 + math.floor(t[2] / 1000))
if seq <= covered then
  redis.call('DEL', KEYS[1])
  return 1
end
local deleteSeq = tonumber(redis.call('HGET', KEYS[1], 'deleteSeq') or '0')
if deleteSeq <= covered then redis.call('HSET', KEYS[1], 'delete', 0, 'deleteSeq', 0, 'force', 0) end
return 0`,
);

const FAIL = luaScript(
  'persist-intent-fail',
  `-- Records a final failure of the run that attempted requests up to ARGV[1]. With ARGV[3] = 1 the
-- failure is permanent and consumes those requests (like a completion would); otherwise the
-- intent stays for the next run.
-- KEYS[1] intent hash   KEYS[2] status hash   ARGV: attemptedSeq, failedReason, consume(0|1)
redis.call('HSET', KEYS[2], 'failedSeq', ARGV[1], 'failedReason', ARGV[2])
if ARGV[3] == '1' then
  local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
  local covered = tonumber(ARGV[1])
  if seq <= covered then
    redis.call('DEL', KEYS[1])
  else
    local deleteSeq = tonumber(redis.call('HGET', KEYS[1], 'deleteSeq') or '0')
    if deleteSeq <= covered then redis.call('HSET', KEYS[1], 'delete', 0, 'deleteSeq', 0, 'force', 0) end
  end
end
return 1`,
);

// Hash fields → intent (null when there is no pending request).
function toIntent(hash: Record<string, string>): PersistIntent | null {
  if (!hash.seq) return null;
  return {
    seq: Number(hash.seq),
    delete: hash.delete === '1',
    deleteSeq: Number(hash.deleteSeq ?? 0),
    force: hash.force === '1',
    reason: (hash.reason as PersistReason) ?? 'manual',
    turnId: hash.turnId ? hash.turnId : null,
    generation: Number(hash.generation ?? 0),
  };
}

/** Outcome of the newest persist runs, as recorded for waiters. */
export interface PersistStatus {
  readonly completedSeq: number;
  /** Epoch ms of the newest successful run (changed or not); 0 if none. */
  readonly completedAt: number;
  readonly result: unknown;
  readonly failedSeq: number;
  readonly failedReason: string | null;
}

export class PersistIntentStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
  ) {}

  /** Merges a request; returns its sequence number. */
  async merge(workspaceId: string, request: PersistRequest): Promise<number> {
    return Number(
      await MERGE.run(this.redis, [this.keys.persistIntent(workspaceId), this.keys.persistStatus(workspaceId)], [
        request.delete ? 1 : 0,
        request.force ? 1 : 0,
        request.reason,
        request.turnId ?? '',
        request.generation,
      ]),
    );
  }

  /** The pending intent (not consumed: a crashed run leaves it for the re-run). */
  async read(workspaceId: string): Promise<PersistIntent | null> {
    return toIntent(await this.redis.hgetall(this.keys.persistIntent(workspaceId)));
  }

  /** Marks requests up to `coveredSeq` done and publishes the result; returns true if nothing newer is pending. */
  async complete(workspaceId: string, coveredSeq: number, result: unknown): Promise<boolean> {
    const done = await COMPLETE.run(this.redis, [this.keys.persistIntent(workspaceId), this.keys.persistStatus(workspaceId)], [coveredSeq, JSON.stringify(result)]);
    return done === 1;
  }

  /**
   * Records a final failure for waiters of requests up to `attemptedSeq`. A permanent failure
   * (`consume`) also clears those requests: retrying them can never succeed.
   */
  async fail(workspaceId: string, attemptedSeq: number, failedReason: string, consume: boolean): Promise<void> {
    await FAIL.run(this.redis, [this.keys.persistIntent(workspaceId), this.keys.persistStatus(workspaceId)], [attemptedSeq, failedReason, consume ? 1 : 0]);
  }

  /** The outcome of the newest runs. */
  async status(workspaceId: string): Promise<PersistStatus> {
    const hash = await this.redis.hgetall(this.keys.persistStatus(workspaceId));
    return {
      completedSeq: Number(hash.completedSeq ?? 0),
      completedAt: Number(hash.completedAt ?? 0),
      result: hash.result ? (JSON.parse(hash.result) as unknown) : null,
      failedSeq: Number(hash.failedSeq ?? 0),
      failedReason: hash.failedReason ?? null,
    };
  }
}
