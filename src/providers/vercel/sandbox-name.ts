/**
 * Deterministic Vercel sandbox names: one per workspace and generation, so a create that the SDK
 * retried (creates are retried and not idempotent) collides with itself instead of leaking a twin.
 *
 * Vercel's rules [docs]: unique per project, at most 128 characters, `^[a-zA-Z0-9_-]+$`.
 * Workspace ids (`^[A-Za-z0-9_-]{1,128}$`) already use that alphabet, so short ids are used as
 * they are: `fleet-<ws>-g<gen>`. Ids longer than `RAW_ID_MAX` become a 40-character prefix plus a
 * 24-hex sha256, 65 characters in all; because raw parts are never longer than 64, a hashed name
 * can never equal a raw one. The longest name is 6 + 65 + 2 + 16 = 89 characters.
 */
import { createHash } from 'node:crypto';

export const SANDBOX_NAME_PREFIX = 'fleet-';
// Longest workspace id used verbatim; hashed parts are exactly one longer (see above).
const RAW_ID_MAX = 64;
const HASHED_PREFIX_LENGTH = 40;
const HASH_LENGTH = 24;
const VERCEL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** The sandbox name of `workspaceId` at `generation`. */
export function sandboxName(workspaceId: string, generation: number): string {
  const part =
    workspaceId.length <= RAW_ID_MAX
      ? workspaceId
      : `${workspaceId.slice(0, HASHED_PREFIX_LENGTH)}-${createHash('sha256').update(workspaceId).digest('hex').slice(0, HASH_LENGTH)}`;
  const name = `${SANDBOX_NAME_PREFIX}${part}-g${generation}`;
  if (!VERCEL_NAME.test(name)) throw new RangeError(`sandbox name ${JSON.stringify(name)} breaks Vercel's name rules`);
  return name;
}

/**
 * The generation and (for unhashed names) the workspace id encoded in a fleet sandbox name, or
 * `null` for names the fleet did not make. Hashed names give `workspaceId: null` (read the tags).
 */
export function parseSandboxName(name: string): { workspaceId: string | null; generation: number } | null {
  const match = /^fleet-(.+)-g(\d{1,16})$/.exec(name);
  if (!match) return null;
  const generation = Number(match[2]);
  if (!Number.isSafeInteger(generation) || generation < 1) return null;
  const part = match[1]!;
  return { workspaceId: part.length <= RAW_ID_MAX ? part : null, generation };
}
