/**
 * Bearer-token authentication and authorization of the HTTP API (`Authorization: Bearer
 * <token>`, tokens from `FLEET_API_TOKENS`, see config/api-tokens.ts). `bearerAuth` finds the
 * token (every configured secret compared in constant time) before anything else of the request
 * is read; `authorizeRoute` then refuses a token used outside its scope: an app token on an
 * operator route, an operator token on an app route, a workspace-limited token on another
 * workspace or on a route that names none (403). With no token configured the API is open, and
 * the server binds to the loopback interface only (see app/start-web-server.ts).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { parseApiToken, tokenAllows, type ApiToken } from '../config/api-tokens.js';
import { ForbiddenError } from '../errors/forbidden-error.js';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import type { ApiRoute } from './api-route.js';
import { constantTimeEquals } from './constant-time-equals.js';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;
const TOKEN_KEY = 'fleetToken';

// The configured token `given` is, comparing every secret (no early exit); null when none.
function find(tokens: readonly ApiToken[], given: string): ApiToken | null {
  let found: ApiToken | null = null;
  for (const token of tokens) if (constantTimeEquals(given, token.secret) && !found) found = token;
  return found;
}

export function bearerAuth(entries: readonly string[]): MiddlewareHandler {
  const tokens = entries.map(parseApiToken);
  return async (c, next) => {
    if (tokens.length === 0) return next();
    c.header('WWW-Authenticate', 'Bearer realm="sandbox-fleet"');
    const header = c.req.header('authorization');
    const given = header ? BEARER.exec(header)?.[1] : undefined;
    if (!given) throw new UnauthorizedError('missing bearer token (Authorization: Bearer <token>)');
    const token = find(tokens, given);
    if (!token) throw new UnauthorizedError('bearer token not accepted');
    c.set(TOKEN_KEY as never, token as never);
    return next();
  };
}

const tokenOf = (c: Context): ApiToken | undefined => c.get(TOKEN_KEY as never) as ApiToken | undefined;

/** Whether the request's token may see a workspace (no token configured, or an unlimited one: every workspace). */
export function workspaceFilter(c: Context): (workspaceId: string) => boolean {
  const token = tokenOf(c);
  return (workspaceId) => !token || tokenAllows(token, workspaceId);
}

/** Refuses the route to a token outside its scope (none configured: open). */
export function authorizeRoute(route: Pick<ApiRoute, 'scope' | 'operationId' | 'filtersWorkspaces'>): MiddlewareHandler {
  return async (c, next) => {
    const token = tokenOf(c);
    if (!token) return next();
    if (token.scope !== 'all' && token.scope !== route.scope) throw new ForbiddenError(`this token is limited to ${token.scope} routes; ${route.operationId} is an ${route.scope} route`);
    if (token.workspaces !== null) {
      const workspaceId = c.req.param('workspaceId');
      if (workspaceId === undefined && !route.filtersWorkspaces) throw new ForbiddenError(`this token is limited to workspaces ${token.workspaces}; ${route.operationId} names no workspace`);
      if (workspaceId === undefined) return next();
      if (!tokenAllows(token, workspaceId)) throw new ForbiddenError(`this token is limited to workspaces ${token.workspaces}`);
    }
    return next();
  };
}
