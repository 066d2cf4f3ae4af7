/**
 * The guard in front of Bull Board (`/admin/queues`):
 * - basic auth, user `admin`, password `FLEET_ADMIN_PASSWORD`, compared in constant time;
 * - same-origin for every state-changing request. Browsers resend basic-auth credentials to any
 *   page that targets the board, so a cross-site form or script could otherwise retry, clean or
 *   add jobs. The board's UI (axios, no custom header) sends `Origin` on its PUT/POST/PATCH/DELETE
 *   calls; we require `Origin` (or, failing that, `Referer`) to name this host, and refuse
 *   `Sec-Fetch-Site: cross-site | same-site` outright.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { CrossOriginError } from '../errors/cross-origin-error.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import { constantTimeEquals } from './constant-time-equals.js';

export const ADMIN_USER = 'admin';
export const ADMIN_REALM = 'sandbox-fleet admin';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// user:password from a Basic header, or null.
function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  const match = header ? /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

// Host (host:port) named by an Origin or Referer value, or null when absent or unparsable.
function hostOf(value: string | undefined): string | null {
  if (!value || value === 'null') return null;
  try {
    return new URL(value).host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Throws CrossOriginError unless a state-changing request comes from this host: the `Host` it
 * arrived with, or the public origin (`FLEET_PUBLIC_URL`) a proxy in front of it serves.
 */
export function assertSameOrigin(c: Context, publicUrl: string | null = null): void {
  if (SAFE_METHODS.has(c.req.method)) return;
  const site = c.req.header('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') throw new CrossOriginError(`refused ${c.req.method} from another site (Sec-Fetch-Site: ${site})`);
  const host = (c.req.header('host') ?? '').toLowerCase();
  const origin = hostOf(c.req.header('origin')) ?? hostOf(c.req.header('referer'));
  if (!origin) throw new CrossOriginError(`refused ${c.req.method} without Origin or Referer (state changes must come from the board's page)`);
  const publicHost = hostOf(publicUrl ?? undefined);
  if (origin !== host && origin !== publicHost) throw new CrossOriginError(`refused ${c.req.method} from origin ${origin} (expected ${host}${publicHost ? ` or ${publicHost}` : ''})`);
}

export function adminGuard(password: string, publicUrl: string | null = null): MiddlewareHandler {
  return async (c, next) => {
    const credentials = basicCredentials(c.req.header('authorization'));
    // Both parts are always compared, so a wrong user costs the same as a wrong password.
    const userOk = constantTimeEquals(credentials?.user ?? '', ADMIN_USER);
    const passwordOk = constantTimeEquals(credentials?.password ?? '', password);
    if (!credentials || !userOk || !passwordOk) {
      c.header('WWW-Authenticate', `Basic realm="${ADMIN_REALM}", charset="UTF-8"`);
      throw new UnauthorizedError(credentials ? 'wrong admin credentials' : 'admin credentials required');
    }
    assertSameOrigin(c, publicUrl);
    return next();
  };
}
