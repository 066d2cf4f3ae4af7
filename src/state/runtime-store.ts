/**
 * The runtime resource (seed 000): the provider-neutral record of a workspace's runtime, changed
 * only by the fenced transitions of runtime-transitions.ts (one Lua script each, checking the
 * allowed previous states and the generation in the same step):
 *
 *   pending → provisioning → ready → stopped
 *                  └──────────→ error   (a failure between create and ready; never `ready`)
 *
 * Base-snapshot fields are provenance only (which base a workspace started from); activating a
 * new base never changes them, and a transition keeps every field it does not set (so later
 * fields, e.g. a per-workspace uid, survive new incarnations).
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { perWorkspace } from './buckets.js';
import { TRANSITION_SCRIPTS, type RuntimeState, type RuntimeTransitionName } from './runtime-transitions.js';

export type { RuntimeState } from './runtime-transitions.js';

export interface RuntimeResource {
  readonly workspaceId: string;
  readonly state: RuntimeState;
  readonly provider: string;
  readonly generation: number;
  readonly handle: string | null;
  /** What the handle is: `persistent-name` (Vercel: one name for every generation) or `volume-path` (local). */
  readonly handleKind: string | null;
  readonly hostId: string | null;
  /** The provider's session of the incarnation when last seen (metadata only; sessions come and go). */
  readonly currentSessionId: string | null;
  /** The provider's persisted snapshot of the incarnation when it reports one (metadata only). */
  readonly currentSnapshotId: string | null;
  /** The runtime the incarnation was made with (its base's manifest), when known. */
  readonly runtime: string | null;
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

/** Fields a transition may set next to the state (the state and generation are its own). */
export type RuntimePatch = Partial<Omit<RuntimeResource, 'workspaceId' | 'state' | 'generation' | 'createdAt' | 'updatedAt'>>;

/** What a transition did: applied, or refused with what the record and the counter held. */
export type TransitionResult =
  | { readonly applied: true }
  | { readonly applied: false; readonly state: RuntimeState | 'none'; readonly generation: number; readonly counter: number };

// Patch → flat field/value list ('' = null).
function toFields(patch: RuntimePatch): string[] {
  const fields: string[] = [];
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) fields.push(key, value === null ? '' : String(value));
  return fields;
}

const text = (value: string | undefined) => (value ? value : null);

export class RuntimeStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
    /** A provisioning record not updated for this long belongs to a dead provisioner. @default 300000 */
    private readonly staleProvisioningMs = 5 * 60_000,
  ) {}

  /** The state of each workspace's runtime resource (null without one), in the order given: one pipeline. */
  async statesOf(workspaceIds: readonly string[]): Promise<(RuntimeState | null)[]> {
    const replies = await perWorkspace<string | null>(this.redis, this.keys, workspaceIds, (pipeline, ws) => pipeline.hget(this.keys.runtime(ws), 'state'));
    return replies.map((state) => (state || null) as RuntimeState | null);
  }

  async get(workspaceId: string): Promise<RuntimeResource | null> {
    const h = await this.redis.hgetall(this.keys.runtime(workspaceId));
    if (!h.state) return null;
    return {
      workspaceId,
      state: h.state as RuntimeState,
      provider: h.provider ?? 'local',
      generation: Number(h.generation ?? 0),
      handle: text(h.handle),
      handleKind: text(h.handleKind),
      hostId: text(h.hostId),
      currentSessionId: text(h.currentSessionId),
      currentSnapshotId: text(h.currentSnapshotId),
      runtime: text(h.runtime),
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

  /**
   * Applies one transition of `generation` (see RUNTIME_TRANSITIONS) with the fields of `patch`,
   * atomically checked against the record and the workspace's generation counter.
   */
  async transition(workspaceId: string, name: RuntimeTransitionName, generation: number, patch: RuntimePatch = {}, now = Date.now()): Promise<TransitionResult> {
    const reply = (await TRANSITION_SCRIPTS[name].run(
      this.redis,
      [this.keys.runtime(workspaceId), this.keys.generation(workspaceId)],
      [generation, now, now - this.staleProvisioningMs, ...toFields(patch)],
    )) as [number, string?, number?, number?];
    if (reply[0] === 1) return { applied: true };
    return { applied: false, state: (reply[1] ?? 'none') as RuntimeState | 'none', generation: Number(reply[2] ?? 0), counter: Number(reply[3] ?? 0) };
  }
}
