/**
 * Registry of base snapshots: one entry per snapshot, at most one active per provider and lane,
 * the previous active kept as the rollback candidate. Provisioning asks only `active()`;
 * activation never touches existing workspaces (their runtime resource keeps its provenance),
 * and `referencedBy()` answers "which workspaces started from snapshot X".
 */
import type { RedisClient } from '../redis.js';
import { FleetError } from '../errors/fleet-error.js';
import type { FleetKeys } from '../keys.js';
import { BaseManifest, type TemplateFile } from '../queues/base-manifest.js';
import { parsePayload } from '../queues/payload.js';
import type { z } from 'zod';
import { ACTIVATE, FAIL_CANDIDATE, MARK_GONE, PROMOTE, RETIRE_BEGIN, RETIRE_FINISH, ROLLBACK } from './base-registry-scripts.js';

/**
 * `baking` → `candidate` (snapshot taken, not yet tested in a sandbox made from it) → `ready`
 * (tested, usable) or `failed` (never activatable); a candidate is activated only by force. A
 * ready base becomes `gone` when its provider snapshot turned out expired or deleted; GC claims an
 * unused one as `retiring` (no longer activatable), deletes its snapshot and records it `retired`.
 */
export type BaseStatus = 'baking' | 'candidate' | 'ready' | 'failed' | 'gone' | 'retiring' | 'retired';

/** The result of claiming a base for retirement. */
export type RetireClaim = { readonly claimed: true } | { readonly claimed: false; readonly why: string };

// How many times a script whose precondition moved is run again with fresh reads.
const ATTEMPTS = 10;

const now = (): number => Date.now();

/** What a base hands on to workspaces beyond its snapshot. */
export interface BaseTemplate {
  readonly overlay?: readonly TemplateFile[];
  readonly migrate?: readonly string[];
  readonly smoke?: readonly string[];
}

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
  /** When a sandbox made from the snapshot passed (or failed) the manifest's smoke checks; null = untested. */
  readonly testedAt: number | null;
  /** When it last stopped being active or the rollback target of the active base (retention counts from here); null = never. */
  readonly rotatedAt: number | null;
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
    testedAt: num(h.testedAt),
    rotatedAt: num(h.rotatedAt),
    retiredAt: num(h.retiredAt),
    expiresAt: num(h.expiresAt),
  };
}

export class BaseRegistry {
  constructor(
    protected readonly redis: RedisClient,
    protected readonly keys: FleetKeys,
  ) {}

  /** Field of the active-bases hash for a provider and lane. */
  static laneField(provider: string, lane: string): string {
    return `${provider}:${lane}`;
  }

  /**
   * Records a new entry (status `candidate`, `ready` or `failed`), with what its workspaces get
   * from it: the template overlay, and the migration and smoke commands of an upgrade to it.
   */
  async register(
    entry: Omit<BaseEntry, 'active' | 'previousSnapshotId' | 'retiredAt' | 'testedAt' | 'rotatedAt'> & { previousSnapshotId?: null; testedAt?: number | null; rotatedAt?: null },
    template: BaseTemplate = {},
  ): Promise<void> {
    const fields: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...entry, active: false })) fields[k] = v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
    const json = (list: readonly unknown[] | undefined) => (list && list.length > 0 ? JSON.stringify(list) : '');
    fields.overlay = json(template.overlay);
    fields.migrate = json(template.migrate);
    fields.smoke = json(template.smoke);
    const multi = this.redis.multi().hset(this.keys.base(entry.snapshotId), fields).zadd(this.keys.bases(), entry.createdAt, entry.snapshotId);
    // Only a usable snapshot is found by its manifest hash (a failed bake must never be reused).
    if (entry.status === 'ready') multi.set(this.keys.baseByHash(entry.provider, entry.manifestHash), entry.snapshotId);
    await multi.exec();
  }

  /** The template overlay of a base (validated again: the hash is Redis data); [] when it has none. */
  async overlay(snapshotId: string): Promise<TemplateFile[]> {
    return this.#template(snapshotId, 'overlay', BaseManifest.shape.overlay);
  }

  /** What upgrading a workspace to this base runs: its migration commands, then its smoke checks. */
  async upgradeSteps(snapshotId: string): Promise<{ migrate: string[]; smoke: string[] }> {
    const [migrate, smoke] = await Promise.all([this.#template(snapshotId, 'migrate', BaseManifest.shape.migrate), this.#template(snapshotId, 'smoke', BaseManifest.shape.smoke)]);
    return { migrate, smoke };
  }

  // A JSON list field of the entry, validated again (the hash is Redis data); [] when empty.
  async #template<T>(snapshotId: string, field: 'overlay' | 'migrate' | 'smoke', schema: z.ZodType<T[]>): Promise<T[]> {
    const raw = await this.redis.hget(this.keys.base(snapshotId), field);
    if (!raw) return [];
    let stored: unknown = raw;
    try {
      stored = JSON.parse(raw);
    } catch {
      // Not JSON: refused by the schema below, naming the base.
    }
    return parsePayload(`${field} of base ${snapshotId}`, schema, stored);
  }

  async get(snapshotId: string): Promise<BaseEntry | null> {
    return toEntry(await this.redis.hgetall(this.keys.base(snapshotId)));
  }

  /** A usable (ready) entry for a manifest hash on a provider, if any. */
  async readyByHash(provider: string, manifestHash: string): Promise<BaseEntry | null> {
    const id = await this.redis.get(this.keys.baseByHash(provider, manifestHash));
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

  /** Records a candidate as tested and ready (found by its manifest hash from now on); false if it was not a candidate. */
  async promote(snapshotId: string, now = Date.now()): Promise<boolean> {
    const entry = await this.get(snapshotId);
    if (!entry) return false;
    return (await PROMOTE.run(this.redis, [this.keys.base(snapshotId), this.keys.baseByHash(entry.provider, entry.manifestHash)], [snapshotId, now])) === 1;
  }

  /** Records that a candidate failed its test (never activatable); false if it was not a candidate. */
  async failCandidate(snapshotId: string, error: string, now = Date.now()): Promise<boolean> {
    return (await FAIL_CANDIDATE.run(this.redis, [this.keys.base(snapshotId)], [error, now])) === 1;
  }

  /**
   * Activates a ready entry for its lane; returns the previous active id. `force` also activates
   * a candidate (a snapshot never tested in a sandbox made from it); never a failed or gone one.
   */
  async activate(snapshotId: string, options: { force?: boolean } = {}): Promise<string | null> {
    const entry = await this.get(snapshotId);
    if (!entry) throw new BaseRegistryError(`base snapshot ${snapshotId} is not registered`, { context: { snapshotId } });
    const lane = BaseRegistry.laneField(entry.provider, entry.lane);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const previous = (await this.redis.hget(this.keys.activeBases(), lane)) ?? '';
      const target = previous ? ((await this.redis.hget(this.keys.base(previous), 'previousSnapshotId')) ?? '') : '';
      const keys = [this.keys.activeBases(), this.keys.base(snapshotId), ...(previous ? [this.keys.base(previous)] : []), ...(target ? [this.keys.base(target)] : [])];
      const reply = (await ACTIVATE.run(this.redis, keys, [lane, snapshotId, previous, options.force ? '1' : '0', target, now()])) as [number, string?];
      if (reply[0] === 1) return reply[1] || null;
      if (reply[0] === -1) {
        const status = (await this.get(snapshotId))?.status ?? entry.status;
        const hint = status === 'candidate' ? ' (it was never tested in a sandbox made from it: bake it again, or activate it with --force)' : '';
        throw new BaseRegistryError(`base snapshot ${snapshotId} is ${status}, only a ready snapshot can be activated${hint}`, { context: { snapshotId, status } });
      }
    }
    throw new BaseRegistryError(`lane ${lane}: the active base kept changing; activate ${snapshotId} again`, { context: { snapshotId, lane } });
  }

  /**
   * Re-activates the rollback candidate of the lane's active base, as of the moment it runs; the
   * base rolled back from becomes the candidate. One script, checked against what was read.
   */
  async rollback(lane: string, provider: string): Promise<{ from: string; to: string }> {
    const field = BaseRegistry.laneField(provider, lane);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const current = await this.redis.hget(this.keys.activeBases(), field);
      const entry = current ? await this.get(current) : null;
      if (!current || !entry?.previousSnapshotId) throw new BaseRegistryError(`lane ${provider}:${lane} has no previous base to roll back to`, { context: { lane, provider } });
      const target = entry.previousSnapshotId;
      const reply = (await ROLLBACK.run(this.redis, [this.keys.activeBases(), this.keys.base(current), this.keys.base(target)], [field, current, target])) as [number, string?];
      if (reply[0] === 1) return { from: current, to: target };
      if (reply[0] === -1) {
        const status = (await this.get(target))?.status ?? 'unknown';
        throw new BaseRegistryError(`lane ${provider}:${lane}: the previous base ${target} is ${status} and cannot be re-activated`, { context: { lane, provider, target, status } });
      }
    }
    throw new BaseRegistryError(`lane ${provider}:${lane}: the active base kept changing; roll back again`, { context: { lane, provider } });
  }

  /**
   * Claims a base for retirement if it is not active, not the rollback candidate of an active
   * base, referenced by no workspace and unprotected since before `unprotectedBefore` (created
   * then and, if it was ever active or a rollback target, rotated out then; one script). From then
   * on it cannot be activated; `finishRetire` records it retired once its snapshot is deleted.
   */
  async beginRetire(snapshotId: string, unprotectedBefore: number, now = Date.now()): Promise<RetireClaim> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const actives = Object.values(await this.redis.hgetall(this.keys.activeBases()));
      const reply = (await RETIRE_BEGIN.run(
        this.redis,
        [this.keys.activeBases(), this.keys.base(snapshotId), this.keys.baseRefs(snapshotId), ...actives.map((id) => this.keys.base(id))],
        [snapshotId, unprotectedBefore, now, ...actives],
      )) as [number, string?];
      if (reply[0] === 1) return { claimed: true };
      if (reply[0] === 0) return { claimed: false, why: String(reply[1]) };
    }
    return { claimed: false, why: 'the active bases kept changing' };
  }

  /** Records a retiring base as retired (its provider snapshot is deleted). */
  async finishRetire(snapshotId: string, now = Date.now()): Promise<boolean> {
    return (await RETIRE_FINISH.run(this.redis, [this.keys.base(snapshotId)], [now])) === 1;
  }

  /** The generation of a new bake's seed sandbox (a counter that only increases). */
  async nextBakeGeneration(): Promise<number> {
    return Number(await this.redis.incr(this.keys.bakeSeq()));
  }

  /** Records that a workspace started from a base (provenance index for retirement). */
  async addReference(snapshotId: string, workspaceId: string): Promise<void> {
    await this.redis.sadd(this.keys.baseRefs(snapshotId), workspaceId);
  }

  async removeReference(snapshotId: string, workspaceId: string): Promise<void> {
    await this.redis.srem(this.keys.baseRefs(snapshotId), workspaceId);
  }

  /** How many workspaces the provenance index lists for each base (one pipelined round trip). */
  async referenceCounts(snapshotIds: readonly string[]): Promise<Map<string, number>> {
    if (snapshotIds.length === 0) return new Map();
    const pipeline = this.redis.pipeline();
    for (const id of snapshotIds) pipeline.scard(this.keys.baseRefs(id));
    const replies = (await pipeline.exec()) ?? [];
    return new Map(snapshotIds.map((id, i) => [id, Number(replies[i]?.[1] ?? 0)]));
  }

  /** Workspaces whose runtime resource names this base as provenance. */
  async referencedBy(snapshotId: string): Promise<string[]> {
    return (await this.redis.smembers(this.keys.baseRefs(snapshotId))).sort();
  }

  /** Whether a snapshot is the active base or the active base's rollback candidate of any lane. */
  async isActiveOrCandidate(snapshotId: string): Promise<boolean> {
    const actives = Object.values(await this.redis.hgetall(this.keys.activeBases()));
    if (actives.includes(snapshotId)) return true;
    for (const id of actives) if ((await this.redis.hget(this.keys.base(id), 'previousSnapshotId')) === snapshotId) return true;
    return false;
  }
}
