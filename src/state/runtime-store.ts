/**
 * The runtime resource (seed 000): the provider-neutral record of a workspace's runtime.
 *
 *   pending → provisioning → ready → stopped
 *                  └──────────→ error   (a failure between create and ready; never `ready`)
 *
 * Base-snapshot fields are provenance only (which base a workspace started from); activating a
 * new base never changes them.
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from '../keys.js';

export type RuntimeState = 'pending' | 'provisioning' | 'ready' | 'stopped' | 'error';

export interface RuntimeResource {
  readonly workspaceId: string;
  readonly state: RuntimeState;
  readonly provider: string;
  readonly generation: number;
  readonly handle: string | null;
  readonly hostId: string | null;
  readonly provisionLockToken: string | null;
  readonly templateVersion: string | null;
  readonly baseSnapshotId: string | null;
  readonly baseSnapshotVersion: string | null;
  readonly outcome: string | null;
  readonly source: string | null;
  readonly error: string | null;
  readonly expiresAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

type Patch = Partial<Omit<RuntimeResource, 'workspaceId' | 'createdAt' | 'updatedAt'>>;

// Patch → hash fields ('' = null).
function toFields(patch: Patch, now: number): Record<string, string> {
  const fields: Record<string, string> = { updatedAt: String(now) };
  for (const [key, value] of Object.entries(patch)) fields[key] = value === null || value === undefined ? '' : String(value);
  return fields;
}

const text = (value: string | undefined) => (value ? value : null);

export class RuntimeStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: FleetKeys,
  ) {}

  async get(workspaceId: string): Promise<RuntimeResource | null> {
    const h = await this.redis.hgetall(this.keys.runtime(workspaceId));
    if (!h.state) return null;
    return {
      workspaceId,
      state: h.state as RuntimeState,
      provider: h.provider ?? 'local',
      generation: Number(h.generation ?? 0),
      handle: text(h.handle),
      hostId: text(h.hostId),
      provisionLockToken: text(h.provisionLockToken),
      templateVersion: text(h.templateVersion),
      baseSnapshotId: text(h.baseSnapshotId),
      baseSnapshotVersion: text(h.baseSnapshotVersion),
      outcome: text(h.outcome),
      source: text(h.source),
      error: text(h.error),
      expiresAt: h.expiresAt ? Number(h.expiresAt) : null,
      createdAt: Number(h.createdAt ?? 0),
      updatedAt: Number(h.updatedAt ?? 0),
    };
  }

  /** Applies a transition (the first write also sets createdAt). */
  async set(workspaceId: string, state: RuntimeState, patch: Patch = {}, now = Date.now()): Promise<void> {
    const key = this.keys.runtime(workspaceId);
    await this.redis.multi().hsetnx(key, 'createdAt', String(now)).hset(key, toFields({ ...patch, state }, now)).exec();
  }

  async delete(workspaceId: string): Promise<void> {
    await this.redis.del(this.keys.runtime(workspaceId));
  }
}
