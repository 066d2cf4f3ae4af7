/**
 * Bearer-token authentication of the HTTP API (`Authorization: Bearer <token>`, tokens from
 * `FLEET_API_TOKENS`). With no token configured the API is open, and the server binds to the
 * loopback interface only (see app/start-web-server.ts).
 */
import type { MiddlewareHandler } from 'hono';
import { UnauthorizedError } from '../errors/unauthorized-error.js';
import { matchesAny } from './constant-time-equals.js';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

export function bearerAuth(tokens: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    if (tokens.length === 0) return next();
    c.header('WWW-Authenticate', 'Bearer realm="sandbox-fleet"');
    const header = c.req.header('authorization');
    const token = header ? BEARER.exec(header)?.[1] : undefined;
    if (!token) throw new UnauthorizedError('missing bearer token (Authorization: Bearer <token>)');
    if (!matchesAny(token, tokens)) throw new UnauthorizedError('bearer token not accepted');
    return next();
  };
}
