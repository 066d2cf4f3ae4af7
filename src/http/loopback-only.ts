/**
 * Without API tokens the API is open, so it answers loopback clients only. The listener itself
 * may still bind a wider address (`FLEET_HTTP_HOST=0.0.0.0`, as in a container), so that probes
 * and scrapes reach `/healthz`, `/readyz` and `/metrics`; every other path answers a client whose
 * socket is not on loopback with 403. The peer is the socket's address, never a header (a proxy's
 * `X-Forwarded-For` is not trusted). A request handed to the app in-process (no socket) is local.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { ForbiddenError } from '../errors/forbidden-error.js';

export const OPS_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Whether an address is a loopback one (127.0.0.0/8, ::1, and IPv4-mapped 127.x). */
export function isLoopbackAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

// The socket peer of a request served by @hono/node-server; undefined when handed in-process.
function peerOf(c: Context): string | undefined {
  return (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

export function loopbackOnly(): MiddlewareHandler {
  return async (c, next) => {
    const peer = peerOf(c);
    if (peer !== undefined && !OPS_PATHS.has(c.req.path) && !isLoopbackAddress(peer)) {
      throw new ForbiddenError(`${c.req.path} answers loopback clients only while FLEET_API_TOKENS is unset (this address serves ${[...OPS_PATHS].join(', ')}); set FLEET_API_TOKENS to open the API`);
    }
    return next();
  };
}
