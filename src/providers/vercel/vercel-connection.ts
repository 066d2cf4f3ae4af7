/**
 * What every SDK call needs to reach Vercel: explicit credentials (so the SDK never falls back to
 * its own OIDC lookup or, on a TTY, an interactive login) and, when `FLEET_VERCEL_API_URL` is set,
 * a `fetch` that sends the requests there.
 */
import type { Config } from '../../config.js';
import { ConfigError } from '../../errors/config-error.js';
import { apiUrlFetch } from './api-url-fetch.js';

export interface VercelConnection {
  readonly token: string;
  readonly teamId: string;
  readonly projectId: string;
  /** The SDK's public `fetch` option; `undefined` uses the global fetch against vercel.com. */
  readonly fetch?: typeof globalThis.fetch;
}

/**
 * Builds the connection from `Config.vercel`: the access token with team and project ids, or else
 * the OIDC token, whose `owner_id` / `project_id` claims name the team and project (as the SDK
 * itself would read them). Throws `ConfigError` when neither is complete.
 */
export function vercelConnection(vercel: Config['vercel']): VercelConnection {
  const fetch = vercel.apiUrl === null ? undefined : apiUrlFetch(vercel.apiUrl);
  if (vercel.token !== null) {
    if (vercel.teamId === null) throw new ConfigError('FLEET_VERCEL_TEAM_ID', 'a Vercel team id (required with FLEET_VERCEL_TOKEN)', undefined);
    if (vercel.projectId === null) throw new ConfigError('FLEET_VERCEL_PROJECT_ID', 'a Vercel project id (required with FLEET_VERCEL_TOKEN)', undefined);
    return { token: vercel.token, teamId: vercel.teamId, projectId: vercel.projectId, fetch };
  }
  if (vercel.oidcToken !== null) {
    const claims = oidcClaims(vercel.oidcToken);
    if (claims === null) throw new ConfigError('VERCEL_OIDC_TOKEN', 'a JWT with owner_id and project_id claims', '(redacted)');
    return { token: vercel.oidcToken, teamId: vercel.teamId ?? claims.ownerId, projectId: vercel.projectId ?? claims.projectId, fetch };
  }
  throw new ConfigError('FLEET_VERCEL_TOKEN', 'a Vercel access token (or VERCEL_OIDC_TOKEN) for FLEET_PROVIDER=vercel', undefined);
}

// The unverified `owner_id` / `project_id` claims of a JWT, or null when it has none.
function oidcClaims(token: string): { ownerId: string; projectId: string } | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as { owner_id?: unknown; project_id?: unknown };
    if (typeof payload.owner_id !== 'string' || typeof payload.project_id !== 'string') return null;
    return { ownerId: payload.owner_id, projectId: payload.project_id };
  } catch {
    return null;
  }
}
