/**
 * The fleet's identity of a Vercel sandbox. The workspace id and generation are stored as
 * sandbox tags at create time: a durable name carries no generation, and names may be hashed
 * (see `sandbox-name.ts`).
 */
import type { SandboxInfo } from '../sandbox-provider.js';
import { legacySandboxName, parseLegacySandboxName, sandboxName } from './sandbox-name.js';
import { vercelHandle } from './vercel-handle.js';

/** Tag keys written at create time (Vercel allows 5 tags). */
export const WORKSPACE_TAG = 'fleet-workspace';
export const GENERATION_TAG = 'fleet-generation';

/** Remote providers place sandboxes themselves; every Vercel incarnation reports this host id. */
export const VERCEL_HOST_ID = 'vercel';

/** The part of the SDK's sandbox metadata this module reads (the `Sandbox` class and list items both have it). */
export interface SandboxMetadataLike {
  readonly name: string;
  readonly status: string;
  readonly tags?: Readonly<Record<string, string>> | undefined;
  /** Creation time: epoch ms in list items, a `Date` on a `Sandbox` (reference §2). */
  readonly createdAt?: number | Date | undefined;
  /** The current session (list items; a `Sandbox` gives it through `currentSession()`). */
  readonly currentSessionId?: string | undefined;
  /** The provider's persisted snapshot of a stopped persistent sandbox, when it reports one. */
  readonly currentSnapshotId?: string | undefined;
}

const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,128}$/;

// Epoch ms of the creation time, when the metadata carries a sound one.
function createdAtMs(value: number | Date | undefined): number | undefined {
  const ms = value instanceof Date ? value.getTime() : value;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** The tags that identify an incarnation. */
export function fleetTags(workspaceId: string, generation: number): Record<string, string> {
  return { [WORKSPACE_TAG]: workspaceId, [GENERATION_TAG]: String(generation) };
}

/**
 * `SandboxInfo` of a fleet sandbox, or `null` for sandboxes the fleet did not create. A durable
 * name is known by its tags (the workspace whose durable name it is, and a generation); any
 * other fleet name must be the legacy name of its tags' (or its own) workspace and generation.
 * Session statuses `pending` and `running` are `running`; every other status (stopping,
 * stopped, snapshotting, failed, aborted) is `stopped`: the next session call resumes it.
 */
export function describeSandbox(meta: SandboxMetadataLike): SandboxInfo | null {
  const identity = identify(meta);
  if (identity === null) return null;
  const createdAt = createdAtMs(meta.createdAt);
  return {
    ...identity,
    hostId: VERCEL_HOST_ID,
    state: meta.status === 'running' || meta.status === 'pending' ? 'running' : 'stopped',
    // Orphan GC destroys only what it can prove old: the provider's creation time.
    ...(createdAt === undefined ? {} : { createdAt }),
    ...(meta.currentSessionId ? { sessionId: meta.currentSessionId } : {}),
    ...(meta.currentSnapshotId ? { snapshotId: meta.currentSnapshotId } : {}),
  };
}

// Handle, workspace and generation of a fleet sandbox, or null.
function identify(meta: SandboxMetadataLike): { handle: string; workspaceId: string; generation: number } | null {
  const taggedWs = meta.tags?.[WORKSPACE_TAG];
  const taggedGen = meta.tags?.[GENERATION_TAG];
  const tagGeneration = taggedGen !== undefined && /^\d{1,16}$/.test(taggedGen) ? Number(taggedGen) : null;
  if (taggedWs !== undefined && !WORKSPACE_ID.test(taggedWs)) return null;
  if (taggedWs !== undefined && tagGeneration !== null && tagGeneration >= 1 && sandboxName(taggedWs) === meta.name) {
    return { handle: vercelHandle(meta.name, tagGeneration), workspaceId: taggedWs, generation: tagGeneration };
  }
  const parsed = parseLegacySandboxName(meta.name);
  if (parsed === null) return null;
  const workspaceId = taggedWs ?? parsed.workspaceId;
  if (workspaceId === null || (taggedGen !== undefined && tagGeneration !== parsed.generation)) return null;
  if (legacySandboxName(workspaceId, parsed.generation) !== meta.name) return null;
  return { handle: meta.name, workspaceId, generation: parsed.generation };
}
