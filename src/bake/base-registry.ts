/**
 * Registry of base snapshots: one entry per snapshot, at most one active per provider and lane,
 * the previous active kept as the rollback candidate. Provisioning asks only `active()`;
 * activation never touches existing workspaces (their runtime resource keeps its provenance),
 * and `referencedBy()` answers "which workspaces started from snapshot X".
 */
import type { Redis } from 'ioredis';
import { FleetError } from '../errors/fleet-error.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';

/**
 * `baking` → `ready` (usable) or `failed` (never activatable); a ready base becomes `gone` when its
 * provider snapshot turned out expired or deleted, and `retired` once GC deleted it.
 */
export type BaseStatus = 'baking' | 'ready' | 'failed' | 'gone' | 'retired';

export interface BaseEntry {
  readonly provider: string;
  readonly snapshotId: string;
  readonly version: string;
  readonly manifestHash: string;
  readonly name: string;
  readonly runtime: string;
  readonly lane: string;
  readonly status: BaseStatus;
  readonly active: boolean;
  readonly previousSnapshotId: string | null;
  readonly sourceSandboxId: string | null;
  readonly error: string | null;
  readonly createdAt: number;
  readonly readyAt: number | null;
  readonly retiredAt: number | null;
  readonly expiresAt: number | null;
}

export interface ActiveBase {
  readonly snapshotId: string;
  readonly version: string;
}

/** Thrown for registry operations on unknown or unusable entries. Never retried. */
export class BaseRegistryError extends FleetError {
  readonly code = 'BaseRegistry';
  readonly retryable = false;
}

const ACTIVATE = luaScript(
  'base-activate',
  `-- Makes a ready base the active one of its provider+lane; the previous active becomes its rollback candidate.
-- KEYS[1] active-bases hash  KEYS[2] new entry hash   ARGV: laneField, snapshotId, prefix
-- Returns the previous active id ('' if none), or an error reply when the entry is not ready.
if redis.call('HGET', KEYS[2], 'status') ~= 'ready' then return redis.error_reply('NOT_READY') end
local previous = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if previous == ARGV[2] then return previous end
if previous ~= '' then redis.call('HSET', ARGV[3] .. ':base:' .. previous, 'active', '0') end
redis.call('HSET', KEYS[2], 'active', '1', 'previousSnapshotId', previous)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return previous`,
);

const MARK_GONE = luaScript(
  'base-mark-gone',
  `-- Records that a ready base's provider snapshot can no longer seed sandboxes (expired or deleted).
-- KEYS[1] entry hash   ARGV: why, now
-- Returns 1 when marked, 0 when the entry is not ready (nothing written).
if redis.call('HGET', KEYS[1], 'status') ~= 'ready' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'gone', 'error', ARGV[1], 'retiredAt', ARGV[2])
return 1`,
);

// Hash fields → entry.
function toEntry(h: Record<string, string>): BaseEntry | null {
  if (!h.snapshotId) return null;
  const num = (v: string | undefined) => (v ? Number(v) : null);
  return {
    provider: h.provider ?? 'local',
    snapshotId: h.snapshotId,
    version: h.version ?? h.snapshotId,
    manifestHash: h.manifestHash ?? '',
    name: h.name ?? '',
    runtime: h.runtime ?? '',
    lane: h.lane ?? 'default',
    status: (h.status as BaseStatus) ?? 'failed',
    active: h.active === '1',
    previousSnapshotId: h.previousSnapshotId || null,
    sourceSandboxId: h.sourceSandboxId || null,
    error: h.error || null,
    createdAt: Number(h.createdAt ?? 0),
    readyAt: num(h.readyAt),
    retiredAt: num(h.retiredAt),
    expiresAt: num(h.expiresAt),
  };
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

  #refs(snapshotId: string) {
    return `${this.keys.base(snapshotId)}:refs`;
  }
  #byHash(provider: string, manifestHash: string) {
    return `${this.keys.prefix}:bases:hash:${provider}:${manifestHash}`;
  }

  /** Records a new entry (status `baking` or `ready`). */
  async register(entry: Omit<BaseEntry, 'active' | 'previousSnapshotId' | 'retiredAt'> & { previousSnapshotId?: null }): Promise<void> {
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...entry, active: false })) fields[k] = v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
    const multi = this.redis.multi().hset(this.keys.base(entry.snapshotId), fields).zadd(this.keys.bases(), entry.createdAt, entry.snapshotId);
    // Only a usable snapshot is found by its manifest hash (a failed bake must never be reused).
    if (entry.status === 'ready') multi.set(this.#byHash(entry.provider, entry.manifestHash), entry.snapshotId);
    await multi.exec();
  }

  /** Updates status fields of an entry. */
  async update(snapshotId: string, patch: Partial<Pick<BaseEntry, 'status' | 'readyAt' | 'retiredAt' | 'error' | 'expiresAt' | 'sourceSandboxId'>>): Promise<void> {
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries(patch)) fields[k] = v === null || v === undefined ? '' : String(v);
    await this.redis.hset(this.keys.base(snapshotId), fields);
  }

  async get(snapshotId: string): Promise<BaseEntry | null> {
    return toEntry(await this.redis.hgetall(this.keys.base(snapshotId)));
  }

  /** A usable (ready) entry for a manifest hash on a provider, if any. */
  async readyByHash(provider: string, manifestHash: string): Promise<BaseEntry | null> {
    const id = await this.redis.get(this.#byHash(provider, manifestHash));
    const entry = id ? await this.get(id) : null;
    return entry?.status === 'ready' ? entry : null;
  }

  /** All entries, newest first. */
  async list(): Promise<BaseEntry[]> {
    const ids = await this.redis.zrevrange(this.keys.bases(), 0, -1);
    const entries = await Promise.all(ids.map((id) => this.get(id)));
    return entries.filter((e): e is BaseEntry => e !== null);
  }

  /** The active, ready base of a lane for a provider, or null. */
  async active(lane: string, provider: string): Promise<ActiveBase | null> {
    const id = await this.redis.hget(this.keys.activeBases(), BaseRegistry.laneField(provider, lane));
    if (!id) return null;
    const entry = await this.get(id);
    return entry?.status === 'ready' ? { snapshotId: id, version: entry.version } : null;
  }

  /** The entry the lane's active pointer names, whatever its status (null when none). */
  async activeEntry(lane: string, provider: string): Promise<BaseEntry | null> {
    const id = await this.redis.hget(this.keys.activeBases(), BaseRegistry.laneField(provider, lane));
    return id ? this.get(id) : null;
  }

  /** Marks a ready base `gone` (its provider snapshot expired or was deleted); false if it was not ready. */
  async markGone(snapshotId: string, why: string, now = Date.now()): Promise<boolean> {
    return (await MARK_GONE.run(this.redis, [this.keys.base(snapshotId)], [why, now])) === 1;
  }

  /** Activates a ready entry for its lane; returns the previous active id. */
  async activate(snapshotId: string): Promise<string | null> {
    const entry = await this.get(snapshotId);
    if (!entry) throw new BaseRegistryError(`base snapshot ${snapshotId} is not registered`, { context: { snapshotId } });
    try {
      const previous = String(
        await ACTIVATE.run(this.redis, [this.keys.activeBases(), this.keys.base(snapshotId)], [BaseRegistry.laneField(entry.provider, entry.lane), snapshotId, this.keys.prefix]),
      );
      return previous || null;
    } catch (error) {
      throw new BaseRegistryError(`base snapshot ${snapshotId} is ${entry.status}, only a ready snapshot can be activated`, { context: { snapshotId, status: entry.status }, cause: error });
    }
  }

  /** Re-activates the previous base of a lane (the rollback candidate). */
  async rollback(lane: string, provider: string): Promise<{ from: string; to: string }> {
    const current = await this.redis.hget(this.keys.activeBases(), BaseRegistry.laneField(provider, lane));
    const entry = current ? await this.get(current) : null;
    if (!entry?.previousSnapshotId) throw new BaseRegistryError(`lane ${provider}:${lane} has no previous base to roll back to`, { context: { lane, provider } });
    const target = entry.previousSnapshotId;
    await this.activate(target);
    // The rolled-back-from base stays the rollback candidate of the re-activated one.
    await this.redis.hset(this.keys.base(target), 'previousSnapshotId', entry.snapshotId);
    return { from: entry.snapshotId, to: target };
  }

  /** Records that a workspace started from a base (provenance index for retirement). */
  async addReference(snapshotId: string, workspaceId: string): Promise<void> {
    await this.redis.sadd(this.#refs(snapshotId), workspaceId);
  }

  async removeReference(snapshotId: string, workspaceId: string): Promise<void> {
    await this.redis.srem(this.#refs(snapshotId), workspaceId);
  }

  /** Workspaces whose runtime resource names this base as provenance. */
  async referencedBy(snapshotId: string): Promise<string[]> {
    return (await this.redis.smembers(this.#refs(snapshotId))).sort();
  }

  /** Whether a snapshot is the active base or the active base's rollback candidate of any lane. */
  async isActiveOrCandidate(snapshotId: string): Promise<boolean> {
    const actives = Object.values(await this.redis.hgetall(this.keys.activeBases()));
    if (actives.includes(snapshotId)) return true;
    for (const id of actives) if ((await this.redis.hget(this.keys.base(id), 'previousSnapshotId')) === snapshotId) return true;
    return false;
  }
}
