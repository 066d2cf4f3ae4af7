/**
 * The fleet's handle of a Vercel incarnation: `vercel:<name>:g<generation>`, the durable sandbox
 * name (sandbox-name.ts) with the generation it was created for. The handle names one
 * incarnation, as handles always have (publish, retire and orphan GC compare them), while the
 * name stays the same across generations. A legacy handle is a per-generation name itself.
 */
import { parseLegacySandboxName } from './sandbox-name.js';

export const VERCEL_HANDLE_PREFIX = 'vercel:';

/** One Vercel incarnation: the sandbox name and the generation its tags must carry (`durable`), or a legacy name. */
export interface VercelIncarnation {
  readonly name: string;
  readonly generation: number;
  /** A durable name: the sandbox under it may be another generation's, so every call checks its tag. */
  readonly durable: boolean;
}

const DURABLE_HANDLE = /^vercel:(fleet-[A-Za-z0-9_-]{1,122}):g(\d{1,16})$/;

/** The handle of the incarnation of generation `generation` under the durable name `name`. */
export function vercelHandle(name: string, generation: number): string {
  return `${VERCEL_HANDLE_PREFIX}${name}:g${generation}`;
}

/** The incarnation a handle names, or null when it is no Vercel handle. */
export function parseVercelHandle(handle: string): VercelIncarnation | null {
  const durable = DURABLE_HANDLE.exec(handle);
  if (durable) {
    const generation = Number(durable[2]);
    return Number.isSafeInteger(generation) && generation >= 1 ? { name: durable[1]!, generation, durable: true } : null;
  }
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(handle)) return null;
  const legacy = parseLegacySandboxName(handle);
  return legacy ? { name: handle, generation: legacy.generation, durable: false } : null;
}
