/**
 * The fleet's identity of a Vercel sandbox. Names may be hashed (see `sandbox-name.ts`), so the
 * workspace id and generation are also stored as sandbox tags at create time.
 */
import type { SandboxInfo } from '../sandbox-provider.js';
import { parseSandboxName } from './sandbox-name.js';

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
}

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
 * `SandboxInfo` of a fleet sandbox, or `null` for sandboxes the fleet did not create. Session
 * statuses `pending` and `running` are `running`; every other status (stopping, stopped,
 * snapshotting, failed, aborted) is `stopped`: the next session call resumes it.
 */
export function describeSandbox(meta: SandboxMetadataLike): SandboxInfo | null {
  const parsed = parseSandboxName(meta.name);
  if (parsed === null) return null;
  const tagged = meta.tags?.[WORKSPACE_TAG];
  const workspaceId = tagged ?? parsed.workspaceId;
  const generation = meta.tags?.[GENERATION_TAG] !== undefined ? Number(meta.tags[GENERATION_TAG]) : parsed.generation;
  if (workspaceId === null || workspaceId === undefined || generation !== parsed.generation) return null;
  const createdAt = createdAtMs(meta.createdAt);
  return {
    handle: meta.name,
    workspaceId,
    generation,
    hostId: VERCEL_HOST_ID,
    state: meta.status === 'running' || meta.status === 'pending' ? 'running' : 'stopped',
    // Orphan GC destroys only what it can prove old: the provider's creation time.
    ...(createdAt === undefined ? {} : { createdAt }),
  };
}
