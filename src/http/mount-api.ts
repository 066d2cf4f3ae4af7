/**
 * Mounts the route table on a Hono app: bearer auth, a body limit per route, the body (JSON or
 * bytes), the query (validated when the route declares it), wait options, and the answer in the
 * route's kind (JSON, bytes, or a stream that stops when the client goes away).
 */
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Config } from '../config.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { parsePayload } from '../queues/payload.js';
import type { ApiRoute, RouteDeps, RouteResult } from './api-route.js';
import { authorizeRoute, bearerAuth, workspaceFilter } from './bearer-auth.js';
import { readJsonBody } from './read-json-body.js';
import { noteRequestJob, requestIdOf } from './access-log.js';
import { resolveWait, WaitQuery, type WaitOptions } from './wait-query.js';

/**
 * `/v1/workspaces/{workspaceId}` → `/v1/workspaces/:workspaceId`; a `{path}` parameter takes the
 * rest of the path, slashes included (`/files/{path}` → `/files/:path{.+}`).
 */
export const honoPath = (path: string): string => path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'path' ? ':path{.+}' : `:${name}`));

const bodyKindOf = (route: ApiRoute): 'json' | 'bytes' | 'none' => route.bodyKind ?? (route.method === 'post' || route.method === 'put' ? 'json' : 'none');

// The query of a route: the wait parameters of a waitable one plus its own schema, unknown
// parameters refused; a route that declares neither ignores its query (as it always has).
function readQuery(route: ApiRoute, query: Record<string, string>, config: Config): { wait: WaitOptions; query: Record<string, string> } {
  const noWait = { wait: false, timeoutMs: config.http.waitCapMs };
  if (!route.waitable) return { wait: noWait, query: route.query ? (parsePayload('query', route.query.strict(), query) as Record<string, string>) : {} };
  const schema = route.query ? WaitQuery.extend(route.query.shape).strict() : WaitQuery;
  const { wait, timeoutMs, ...own } = parsePayload('query', schema, query) as Record<string, string>;
  return { wait: resolveWait({ ...(wait === undefined ? {} : { wait }), ...(timeoutMs === undefined ? {} : { timeoutMs }) }, config.http.waitCapMs), query: own };
}

// Writes a route's result as the HTTP answer.
function respond(c: Context, result: RouteResult): Response {
  const headers = result.headers ?? {};
  if (result.kind === 'bytes') return c.body(new Uint8Array(result.bytes), result.status, { 'Content-Type': result.contentType, ...headers });
  if (result.kind === 'stream') {
    const iterator = result.chunks[Symbol.asyncIterator]();
    const encoder = new TextEncoder();
    // A pull still waiting when the client goes away must not touch the closed stream.
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await iterator.next();
        if (cancelled) return;
        if (next.done) controller.close();
        else controller.enqueue(typeof next.value === 'string' ? encoder.encode(next.value) : next.value);
      },
      async cancel() {
        cancelled = true;
        await iterator.return?.();
      },
    });
    return c.body(body, 200, { 'Content-Type': result.contentType, 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', ...headers });
  }
  return c.json(result.body as object, result.status, headers);
}

// The wait options with the request's id, which the route hands to the client with them.
const withRequestId = (wait: WaitOptions, reqId: string | undefined): WaitOptions => (reqId === undefined ? wait : { ...wait, reqId });

export function mountApi(app: Hono, routes: readonly ApiRoute[], deps: RouteDeps, config: Config): void {
  app.use('/v1/*', bearerAuth(config.http.apiTokens));
  for (const route of routes) {
    const path = honoPath(route.path);
    const maxSize = route.maxBodyBytes?.(config) ?? config.http.bodyLimitBytes;
    const kind = bodyKindOf(route);
    const limit = bodyLimit({
      maxSize,
      onError: () => {
        throw new PayloadTooLargeError(maxSize);
      },
    });
    app.on(route.method.toUpperCase(), path, authorizeRoute(route), limit, async (c) => {
      const { wait, query } = readQuery(route, c.req.query(), config);
      const body = kind === 'json' ? await readJsonBody(c) : {};
      const bytes = kind === 'bytes' ? Buffer.from(await c.req.arrayBuffer()) : Buffer.alloc(0);
      const result = await route.handle(deps, {
        params: c.req.param() as Record<string, string>,
        body,
        bytes,
        query,
        header: (name) => c.req.header(name),
        wait: withRequestId(wait, requestIdOf(c)),
        allows: workspaceFilter(c),
        signal: c.req.raw.signal,
      });
      const enqueued = result.kind === undefined || result.kind === 'json' ? (result.body as { queue?: unknown; jobId?: unknown } | null) : null;
      if (typeof enqueued?.queue === 'string' && typeof enqueued.jobId === 'string') noteRequestJob(c, enqueued.queue, enqueued.jobId);
      return respond(c, result);
    });
  }
}
