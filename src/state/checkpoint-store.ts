/**
 * The checkpoint store (seed 003's contract, on Redis): a checkpoint is one complete tree of a
 * workspace. `record` (uploaded, not authoritative) → `attach` (authoritative, fenced on the
 * generation) → possibly `rollbackCurrent`; never-attached ones are collected in bounded
 * batches. Kinds: `portable_workspace` (our archive) and `provider_native` (a provider snapshot).
 *
 * The "sandbox" of the contract is the workspace; the fence is the workspace's generation
 * counter (bumped before a replacement starts), compared for equality at attach time.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import { FleetError } from '../errors/fleet-error.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';
import { AddressStore } from './address-store.js';
import { countFenceRejection } from './fence-rejections.js';
import { groupBy, inEveryBucket, lowestScored } from './buckets.js';

export type CheckpointKind = 'portable_workspace' | 'provider_native';

/** Hard upper bound of one collection batch (seed 003 MAX_CHECKPOINT_COLLECT_LIMIT). */
export const MAX_CHECKPOINT_COLLECT_LIMIT = 1_000;

export interface NewCheckpoint {
  readonly workspaceId: string;
  readonly generation: number;
  readonly kind: CheckpointKind;
  /** Revision id (portable) or snapshot id (native). Unique per workspace and kind. */
  readonly workspaceRevision: string;
  readonly providerRef?: string | null;
  readonly sourceTurnId?: string | null;
  readonly reason?: string;
  readonly files?: number;
  readonly bytes?: number;
}

export interface Checkpoint {
  readonly id: string;
  readonly workspaceId: string;
  readonly generation: number;
  readonly kind: CheckpointKind;
  readonly workspaceRevision: string;
  readonly providerRef: string | null;
  readonly sourceTurnId: string | null;
  readonly reason: string;
  readonly files: number;
  readonly bytes: number;
  readonly createdAt: number;
  /** `null` while recorded but not (or no longer) authoritative. */
  readonly attachedAt: number | null;
}

/** Thrown when attaching a checkpoint that was never recorded (or was collected). Never retried. */
export class CheckpointNotFoundError extends FleetError {
  readonly code = 'CheckpointNotFound';
  readonly retryable = false;
}

/** The workspace's head moved between a persist's start and its attach. Retried. */
export class HeadMovedError extends FleetError {
  readonly code = 'HeadMoved';
  readonly retryable = true;
}

const ATTACH = luaScript(
  'checkpoint-attach',
  `-- Promotes a recorded checkpoint to authoritative, fenced on the generation.
-- KEYS[1] generation counter  KEYS[2] checkpoint hash  KEYS[3] attached zset  KEYS[4] unattached zset
-- KEYS[5] head key  KEYS[6] attach sequence counter
-- ARGV: checkpointId, generation, now, expectedHead ('*' = any, '' = none)
-- Returns {1} attached | {-1, currentGen} stale | {-2, head} head moved | {-3} unknown checkpoint
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current ~= tonumber(ARGV[2]) then return {-1, current} end
if redis.call('EXISTS', KEYS[2]) == 0 then return {-3} end
local head = redis.call('GET', KEYS[5]) or ''
if ARGV[4] ~= '*' and head ~= ARGV[4] then return {-2, head} end
local seq = redis.call('INCR', KEYS[6])
redis.call('HSET', KEYS[2], 'attachedAt', ARGV[3], 'attachGeneration', ARGV[2])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('SET', KEYS[5], ARGV[1])
return {1}`,
);

const ROLLBACK = luaScript(
  'checkpoint-rollback',
  `-- Rejects the current checkpoint and falls back to the previous attached one.
-- KEYS[1] generation counter  KEYS[2] head  KEYS[3] attached zset  KEYS[4] unattached zset  KEYS[5] checkpoint hash
-- ARGV: checkpointId, generation, createdAtOfCheckpoint
-- Returns {1, newHead|''} rolled back | {0, head|''} no-op (something newer decided) | {-1, currentGen} stale
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current ~= tonumber(ARGV[2]) then return {-1, current} end
local head = redis.call('GET', KEYS[2]) or ''
if head ~= ARGV[1] then return {0, head} end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[5], 'attachedAt', 'attachGeneration')
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
local prev = redis.call('ZREVRANGE', KEYS[3], 0, 0)
if #prev == 0 then
  redis.call('DEL', KEYS[2])
  return {1, ''}
end
redis.call('SET', KEYS[2], prev[1])
return {1, prev[1]}`,
);

const RECORD = luaScript(
  'checkpoint-record',
  `-- Records a checkpoint once per (workspace, kind, revision).
-- KEYS[1] revision index hash  KEYS[2] checkpoint hash (new id)  KEYS[3] workspace zset  KEYS[4] unattached zset
-- ARGV: indexField, id, createdAt, then field/value pairs
-- Returns the id of the existing or new checkpoint.
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then return existing end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[2], unpack(fields))
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[2])
return ARGV[2]`,
);

const COLLECT = luaScript(
  'checkpoint-collect',
  `-- Deletes the never-attached checkpoints the caller read, each only if it is still unattached,
-- created before ARGV[1] and still of the workspace the caller read (so its keys are the right ones).
-- KEYS[1] unattached zset, then per entry: its checkpoint hash and, unless the caller found no
-- record (workspaceId ''), the workspace's checkpoints zset and revision index hash
-- ARGV[1] before, then per entry: id, workspaceId ('' = no record: only the GC index entry goes)
-- Returns a flat list {id, workspaceId, kind, workspaceRevision, ...} of the deleted records.
local out = {}
local k = 2
for i = 2, #ARGV, 2 do
  local id, ws = ARGV[i], ARGV[i + 1]
  -- KEYS[k] the hash, KEYS[k + 1] and KEYS[k + 2] the workspace's zset and index (when ws ~= '')
  local score = tonumber(redis.call('ZSCORE', KEYS[1], id))
  local h = redis.call('HMGET', KEYS[k], 'workspaceId', 'kind', 'workspaceRevision', 'attachedAt')
  -- Attached, re-scored or collected since the caller read it, or not the record it read: left for the next pass.
  if score and score < tonumber(ARGV[1]) and (h[1] or '') == ws then
    redis.call('ZREM', KEYS[1], id)
    if h[1] and not h[4] then
      redis.call('DEL', KEYS[k])
      redis.call('ZREM', KEYS[k + 1], id)
      redis.call('HDEL', KEYS[k + 2], h[2] .. '|' .. h[3])
      out[#out + 1] = id
      out[#out + 1] = h[1]
      out[#out + 1] = h[2]
      out[#out + 1] = h[3]
    end
  end
  if ws ~= '' then k = k + 3 else k = k + 1 end
end
return out`,
);

const FORGET = luaScript(
  'checkpoint-forget',
  `-- Deletes a checkpoint record unless it is the head.
-- KEYS[1] head  KEYS[2] attached zset  KEYS[3] workspace zset  KEYS[4] unattached zset  KEYS[5] hash  KEYS[6] index
-- ARGV[1] checkpointId.  Returns 1 when deleted, 0 when it is the head.
if redis.call('GET', KEYS[1]) == ARGV[1] then return 0 end
local h = redis.call('HMGET', KEYS[5], 'kind', 'workspaceRevision')
if h[1] then redis.call('HDEL', KEYS[6], h[1] .. '|' .. h[2]) end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[5])
return 1`,
);

// Hash fields → checkpoint.
function toCheckpoint(id: string, h: Record<string, string>): Checkpoint | null {
  if (!h.workspaceId) return null;
  return {
    id,
    workspaceId: h.workspaceId,
    generation: Number(h.generation),
    kind: h.kind as CheckpointKind,
    workspaceRevision: h.workspaceRevision ?? '',
    providerRef: h.providerRef || null,
    sourceTurnId: h.sourceTurnId || null,
    reason: h.reason ?? '',
    files: Number(h.files ?? 0),
    bytes: Number(h.bytes ?? 0),
    createdAt: Number(h.createdAt),
    attachedAt: h.attachedAt ? Number(h.attachedAt) : null,
  };
}

export interface CollectedCheckpoint {
  readonly id: string;
  readonly workspaceId: string;
  readonly kind: CheckpointKind;
  readonly workspaceRevision: string;
}

export class CheckpointStore {
  // The workspace index and generation counter belong to the address store.
  readonly #addresses: AddressStore;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {
    this.#addresses = new AddressStore(redis, keys);
  }

  /** Resolves the logical sandbox of a workspace (idempotent): its id and current generation. */
  async ensureSandbox(workspaceId: string, provider: string): Promise<{ id: string; provider: string; generation: number }> {
    await this.#addresses.remember(workspaceId);
    const generation = await this.#addresses.generation(workspaceId);
    return { id: workspaceId, provider, generation };
  }

  /** Records a completed upload (not authoritative). Recording the same revision twice returns the existing record. */
  async record(input: NewCheckpoint, now = Date.now()): Promise<Checkpoint> {
    const id = randomUUID();
    const fields: Record<string, string> = {
      workspaceId: input.workspaceId,
      generation: String(input.generation),
      kind: input.kind,
      workspaceRevision: input.workspaceRevision,
      providerRef: input.providerRef ?? '',
      sourceTurnId: input.sourceTurnId ?? '',
      reason: input.reason ?? '',
      files: String(input.files ?? 0),
      bytes: String(input.bytes ?? 0),
      createdAt: String(now),
    };
    const stored = String(
      await RECORD.run(
        this.redis,
        [this.keys.checkpointIndex(input.workspaceId), this.#record(input.workspaceId, id), this.keys.checkpoints(input.workspaceId), this.#unattached(input.workspaceId)],
        [`${input.kind}|${input.workspaceRevision}`, id, now, ...Object.entries(fields).flat()],
      ),
    );
    return (await this.get(input.workspaceId, stored))!;
  }

  /** A checkpoint of the workspace (null when not recorded, or recorded for another workspace). */
  async get(workspaceId: string, id: string): Promise<Checkpoint | null> {
    const checkpoint = toCheckpoint(id, await this.redis.hgetall(this.#record(workspaceId, id)));
    return checkpoint && checkpoint.workspaceId === workspaceId ? checkpoint : null;
  }

  // A checkpoint's record hash and the GC index it sits in: in the bucket of its workspace.
  #record(workspaceId: string, id: string): string {
    return this.keys.checkpoint(this.keys.bucket(workspaceId), id);
  }

  #unattached(workspaceId: string): string {
    return this.keys.unattached(this.keys.bucket(workspaceId));
  }

  /** The record of a revision, if recorded. */
  async byRevision(workspaceId: string, kind: CheckpointKind, workspaceRevision: string): Promise<Checkpoint | null> {
    const id = await this.redis.hget(this.keys.checkpointIndex(workspaceId), `${kind}|${workspaceRevision}`);
    return id ? this.get(workspaceId, id) : null;
  }

  /**
   * Makes a recorded checkpoint authoritative, fenced on `generation`. With `expectedHead`
   * (checkpoint id, or `null` for none) the attach also fails with `HeadMovedError` when another
   * attach happened since the caller read the head, so the head never moves backwards.
   */
  async attach(workspaceId: string, checkpointId: string, generation: number, options: { expectedHead?: string | null; now?: number } = {}): Promise<void> {
    const expected = options.expectedHead === undefined ? '*' : (options.expectedHead ?? '');
    const reply = (await ATTACH.run(
      this.redis,
      [
        this.keys.generation(workspaceId),
        this.#record(workspaceId, checkpointId),
        this.keys.attached(workspaceId),
        this.#unattached(workspaceId),
        this.keys.head(workspaceId),
        this.keys.attachSeq(workspaceId),
      ],
      [checkpointId, generation, options.now ?? Date.now(), expected],
    )) as [number, (number | string)?];
    if (reply[0] === 1) return;
    if (reply[0] === -1) {
      await countFenceRejection(this.redis, this.keys);
      throw new StaleGenerationError(workspaceId, generation, Number(reply[1]));
    }
    if (reply[0] === -2) throw new HeadMovedError(`workspace ${workspaceId}: head moved to ${String(reply[1]) || 'none'} during the persist`, { context: { workspaceId } });
    throw new CheckpointNotFoundError(`checkpoint ${checkpointId} is not recorded`, { context: { workspaceId, checkpointId } });
  }

  /** The authoritative checkpoint, if any. */
  async current(workspaceId: string): Promise<Checkpoint | null> {
    const id = await this.redis.get(this.keys.head(workspaceId));
    return id ? this.get(workspaceId, id) : null;
  }

  /**
   * Rejects `checkpointId` as authoritative and falls back to the previous attached one.
   * Fenced on `generation`; a no-op when the head is no longer `checkpointId`.
   */
  async rollbackCurrent(workspaceId: string, checkpointId: string, generation: number): Promise<Checkpoint | null> {
    return (await this.rejectCurrent(workspaceId, checkpointId, generation)).current;
  }

  /**
   * `rollbackCurrent` telling whether it rolled back (`rejected`) or found the head already moved
   * on (a no-op: something newer decided), with the checkpoint the workspace now points at.
   */
  async rejectCurrent(workspaceId: string, checkpointId: string, generation: number): Promise<{ rejected: boolean; current: Checkpoint | null }> {
    const checkpoint = await this.get(workspaceId, checkpointId);
    const reply = (await ROLLBACK.run(
      this.redis,
      [this.keys.generation(workspaceId), this.keys.head(workspaceId), this.keys.attached(workspaceId), this.#unattached(workspaceId), this.#record(workspaceId, checkpointId)],
      [checkpointId, generation, checkpoint?.createdAt ?? Date.now()],
    )) as [number, number | string];
    if (reply[0] === -1) {
      await countFenceRejection(this.redis, this.keys);
      throw new StaleGenerationError(workspaceId, generation, Number(reply[1]));
    }
    const head = String(reply[1]);
    return { rejected: reply[0] === 1, current: head ? await this.get(workspaceId, head) : null };
  }

  /**
   * Deletes up to `limit` (clamped to 1000) never-attached checkpoints older than `before`. Reads
   * the ids and their workspaces first (the script must be given every key it touches); the script
   * skips any entry that was attached or is no longer what was read, and the next run gets it.
   */
  async collectUnattached(before: number, limit: number): Promise<CollectedCheckpoint[]> {
    const out: CollectedCheckpoint[] = [];
    for (const [bucket, ids] of await this.#oldestUnattached(before, limit)) out.push(...(await this.#collectIn(bucket, before, ids)));
    return out;
  }

  // One bucket's share of a collection: one script over the bucket's slot.
  async #collectIn(bucket: number, before: number, ids: readonly string[]): Promise<CollectedCheckpoint[]> {
    // The script gets every key it touches, so it needs each record's workspace first (it checks that it still holds).
    const owners = await Promise.all(ids.map(async (id) => (await this.redis.hget(this.keys.checkpoint(bucket, id), 'workspaceId')) ?? ''));
    const keys = [this.keys.unattached(bucket)];
    const args: (string | number)[] = [before];
    ids.forEach((id, i) => {
      // A record naming a workspace of another bucket is not this bucket's to touch: collected as one without a workspace (its index entries stay).
      const ws = owners[i] && this.keys.bucket(owners[i]!) === bucket ? owners[i]! : '';
      keys.push(this.keys.checkpoint(bucket, id), ...(ws ? [this.keys.checkpoints(ws), this.keys.checkpointIndex(ws)] : []));
      args.push(id, ws);
    });
    const flat = (await COLLECT.run(this.redis, keys, args)) as string[];
    const out: CollectedCheckpoint[] = [];
    for (let i = 0; i < flat.length; i += 4) {
      out.push({ id: flat[i]!, workspaceId: flat[i + 1]!, kind: flat[i + 2] as CheckpointKind, workspaceRevision: flat[i + 3]! });
    }
    return out;
  }

  // The `limit` (clamped) oldest unattached ids created before `before`, over every bucket, grouped by bucket.
  async #oldestUnattached(before: number, limit: number): Promise<Map<number, string[]>> {
    const clamped = Math.max(1, Math.min(MAX_CHECKPOINT_COLLECT_LIMIT, Math.floor(limit)));
    const perBucket = await inEveryBucket(this.keys, (b) => this.redis.zrangebyscore(this.keys.unattached(b), '-inf', `(${before}`, 'WITHSCORES', 'LIMIT', 0, clamped));
    const groups = groupBy(lowestScored(perBucket, clamped), (entry) => entry.bucket);
    return new Map([...groups].map(([bucket, entries]) => [bucket, entries.map((entry) => entry.member)]));
  }

  /** Never-attached checkpoints older than `before` (dry run of `collectUnattached`). */
  async listUnattached(before: number, limit: number): Promise<Checkpoint[]> {
    const all: (Checkpoint | null)[] = [];
    for (const [bucket, ids] of await this.#oldestUnattached(before, limit)) {
      all.push(...(await Promise.all(ids.map(async (id) => toCheckpoint(id, await this.redis.hgetall(this.keys.checkpoint(bucket, id)))))));
    }
    return all.filter((c): c is Checkpoint => c !== null && c.attachedAt === null);
  }

  /** A workspace's checkpoints, newest first. */
  async history(workspaceId: string, limit = 1_000): Promise<Checkpoint[]> {
    const ids = await this.redis.zrevrange(this.keys.checkpoints(workspaceId), 0, limit - 1);
    const all = await Promise.all(ids.map((id) => this.get(workspaceId, id)));
    return all.filter((c): c is Checkpoint => c !== null);
  }

  /** Every checkpoint id of a workspace (recorded, attached or not), oldest first. */
  async ids(workspaceId: string): Promise<string[]> {
    return this.redis.zrange(this.keys.checkpoints(workspaceId), '0', '-1');
  }

  /** Attached checkpoint ids in attach order (oldest first). */
  async attachedIds(workspaceId: string): Promise<string[]> {
    return this.redis.zrange(this.keys.attached(workspaceId), '0', '-1');
  }

  /** Removes an attached checkpoint that fell out of retention (never the head). Returns false if it is the head. */
  async forget(workspaceId: string, checkpointId: string): Promise<boolean> {
    const reply = await FORGET.run(
      this.redis,
      [this.keys.head(workspaceId), this.keys.attached(workspaceId), this.keys.checkpoints(workspaceId), this.#unattached(workspaceId), this.#record(workspaceId, checkpointId), this.keys.checkpointIndex(workspaceId)],
      [checkpointId],
    );
    return reply === 1;
  }
}
