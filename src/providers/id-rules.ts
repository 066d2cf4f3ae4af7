/**
 * The rule of every id the fleet turns into a path, a Redis key or a provider call, as pure
 * checks. An id read back from Redis, a provider listing or the archive is checked against its
 * rule right before a destructive call (DESIGN.md "Threat model: the sandbox is hostile"): a
 * planted `..` or `../../victim` must never reach `rm`, `destroy` or `deleteSnapshot`.
 */
import { REVISION_ID_PATTERN } from '../archive/archive-paths.js';
import { OBJECT_ID_PATTERN } from '../archive/tree-object.js';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { parseLocalHandle } from './local/live-paths.js';
import { legacySandboxName, sandboxName } from './vercel/sandbox-name.js';
import { parseVercelHandle } from './vercel/vercel-handle.js';
import { SNAPSHOT_ID_PATTERN, WORKSPACE_ID_PATTERN } from '../queues/payload.js';

/** Checkpoint ids are `randomUUID()`s (state/checkpoint-store.ts). */
export const CHECKPOINT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The ids one destructive call acts on. `handle` must also belong to `workspaceId` when both are given. */
export interface IdSet {
  readonly workspaceId?: unknown;
  readonly revision?: unknown;
  readonly snapshotId?: unknown;
  readonly checkpointId?: unknown;
  readonly checkpointKind?: unknown;
  readonly provider?: unknown;
  readonly handle?: unknown;
  /** An object or tree id of the archive's store (a SHA-256). */
  readonly objectId?: unknown;
}

/** An id that broke its rule: the field, the value as read, and the rule. */
export interface InvalidId {
  readonly field: string;
  readonly value: string;
  readonly reason: string;
}

const RULES: Record<Exclude<keyof IdSet, 'handle'>, { readonly test: (value: string) => boolean; readonly rule: string }> = {
  workspaceId: { test: (v) => WORKSPACE_ID_PATTERN.test(v), rule: 'must match ^[A-Za-z0-9_-]{1,128}$' },
  revision: { test: (v) => REVISION_ID_PATTERN.test(v), rule: 'must be a revision id like r20261130T101530123Z-g3-k7f2q9' },
  snapshotId: { test: (v) => SNAPSHOT_ID_PATTERN.test(v), rule: 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$' },
  checkpointId: { test: (v) => CHECKPOINT_ID_PATTERN.test(v), rule: 'must be a checkpoint id (a UUID)' },
  checkpointKind: { test: (v) => v === 'portable_workspace' || v === 'provider_native', rule: 'must be portable_workspace or provider_native' },
  provider: { test: (v) => v === 'local' || v === 'vercel', rule: 'must be local or vercel' },
  objectId: { test: (v) => OBJECT_ID_PATTERN.test(v), rule: 'must be a lower-case hex SHA-256 (64 characters)' },
};

/** The provider a handle names (`local:<host>:<ws>:g<gen>`, `vercel:<name>:g<gen>` or a legacy Vercel name), or null. */
export function handleProvider(handle: string): 'local' | 'vercel' | null {
  if (parseLocalHandle(handle)) return 'local';
  return parseVercelHandle(handle) ? 'vercel' : null;
}

// True when `handle` names an incarnation of `workspaceId` (Vercel names are rebuilt, hashed or not).
function handleBelongsTo(handle: string, workspaceId: string): boolean {
  const local = parseLocalHandle(handle);
  if (local) return local.workspaceId === workspaceId;
  const vercel = parseVercelHandle(handle);
  if (vercel === null) return false;
  try {
    return vercel.durable ? sandboxName(workspaceId) === vercel.name : legacySandboxName(workspaceId, vercel.generation) === vercel.name;
  } catch {
    // A workspace id no sandbox name can be made of owns no handle.
    return false;
  }
}

/** The first id of `ids` that breaks its rule, or null when every given id is valid. */
export function firstInvalidId(ids: IdSet): InvalidId | null {
  for (const [field, value] of Object.entries(ids) as [keyof IdSet, unknown][]) {
    if (value === undefined) continue;
    if (typeof value !== 'string') return { field, value: String(value), reason: 'must be a string' };
    if (field === 'handle') {
      if (handleProvider(value) === null) return { field, value, reason: 'must be a local handle local:<host>:<workspace>:g<generation> or a Vercel handle vercel:<name>:g<generation>' };
      if (typeof ids.workspaceId === 'string' && !handleBelongsTo(value, ids.workspaceId)) return { field, value, reason: `must name an incarnation of workspace ${ids.workspaceId}` };
    } else if (!RULES[field].test(value)) {
      return { field, value, reason: RULES[field].rule };
    }
  }
  return null;
}

/** Throws a permanent `PayloadInvalidError` for `subject` naming the first invalid id and its value. */
export function checkIds(subject: string, ids: IdSet, fieldPrefix = ''): void {
  const invalid = firstInvalidId(ids);
  if (invalid) throw new PayloadInvalidError(subject, [{ field: `${fieldPrefix}${invalid.field}`, message: invalid.reason, value: invalid.value }]);
}
