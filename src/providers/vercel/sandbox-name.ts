/**
 * Vercel sandbox names. A workspace has **one durable name** for its whole life, `fleet-<ws>`:
 * every generation is created under it (the previous incarnation is deleted first), so the
 * name a dashboard, a domain or an operator knows stays valid. The generation lives in the
 * sandbox's tags and in the fleet's handle (`vercel-handle.ts`), and every call checks it
 * (`generation-fence.ts`). A create that the SDK retried (creates are retried and not
 * idempotent) still collides with itself instead of leaking a twin.
 *
 * Until this version, names were per generation, `fleet-<ws>-g<gen>` (**legacy names**): such
 * sandboxes keep working under their handles (which are those names) until they are replaced.
 *
 * Vercel's rules [docs]: unique per project, at most 128 characters, `^[a-zA-Z0-9_-]+$`.
 * Workspace ids (`^[A-Za-z0-9_-]{1,128}$`) already use that alphabet, so short ids are used as
 * they are. Ids longer than `RAW_ID_MAX` become a 40-character prefix plus a 24-hex sha256, 65
 * characters in all; because raw parts are never longer than 64, a hashed name can never equal a
 * raw one. The longest durable name is 6 + 65 = 71 characters, the longest legacy one 89.
 */
import { createHash } from 'node:crypto';

export const SANDBOX_NAME_PREFIX = 'fleet-';
// Longest workspace id used verbatim; hashed parts are exactly one longer (see above).
const RAW_ID_MAX = 64;
const HASHED_PREFIX_LENGTH = 40;
const HASH_LENGTH = 24;
const VERCEL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

// The name part of a workspace id: itself when short, else a prefix and a hash.
function namePart(workspaceId: string): string {
  return workspaceId.length <= RAW_ID_MAX
    ? workspaceId
    : `${workspaceId.slice(0, HASHED_PREFIX_LENGTH)}-${createHash('sha256').update(workspaceId).digest('hex').slice(0, HASH_LENGTH)}`;
}

function checked(name: string): string {
  if (!VERCEL_NAME.test(name)) throw new RangeError(`sandbox name ${JSON.stringify(name)} breaks Vercel's name rules`);
  return name;
}

/** The durable sandbox name of `workspaceId` (every generation). */
export function sandboxName(workspaceId: string): string {
  return checked(`${SANDBOX_NAME_PREFIX}${namePart(workspaceId)}`);
}

/** The legacy per-generation name of `workspaceId` at `generation` (sandboxes made before durable names). */
export function legacySandboxName(workspaceId: string, generation: number): string {
  return checked(`${SANDBOX_NAME_PREFIX}${namePart(workspaceId)}-g${generation}`);
}

/**
 * The generation and (for unhashed names) the workspace id a legacy name encodes, or `null` for
 * names that cannot be one. A durable name of a workspace id ending in `-g<digits>` parses too:
 * the tags tell the two apart (sandbox-info.ts).
 */
export function parseLegacySandboxName(name: string): { workspaceId: string | null; generation: number } | null {
  const match = /^fleet-(.+)-g(\d{1,16})$/.exec(name);
  if (!match) return null;
  const generation = Number(match[2]);
  if (!Number.isSafeInteger(generation) || generation < 1) return null;
  const part = match[1]!;
  return { workspaceId: part.length <= RAW_ID_MAX ? part : null, generation };
}
