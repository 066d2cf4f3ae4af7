/**
 * The HTTP access log and request ids: every request gets an id (the client's `X-Request-Id`
 * when it is a plain id, else a new UUID), answered in `X-Request-Id`, logged on its access-log
 * line (`reqId`, method, route, path, status, durationMs, and `job` when it enqueued one) and carried into the jobs the request
 * enqueues, whose log lines bear the same `reqId`. Probes and scrapes (`/healthz`, `/readyz`,
 * `/metrics`) that succeed log at debug; everything else at info (4xx: warn, 5xx: error). For a
 * streamed answer the duration is the time to its first byte.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from '../logger.js';
import { requestIdFrom } from '../observability/job-trace.js';
import { OPS_PATHS } from './loopback-only.js';

const ids = new WeakMap<Request, string>();
const jobs = new WeakMap<Request, string>();

/** The id of the request `c` answers (set by `accessLog`). */
export function requestIdOf(c: Context): string | undefined {
  return ids.get(c.req.raw);
}

/**
 * Records the job a request enqueued or joined (`persist@host-a/42`) for its access-log line: a
 * request that coalesced into a job another producer created (a persist joining a checkpoint's)
 * is found from the job this way, since that job's lines carry the creator's id.
 */
export function noteRequestJob(c: Context, queue: string, jobId: string): void {
  jobs.set(c.req.raw, `${queue}/${jobId}`);
}

export function accessLog(logger: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    const reqId = requestIdFrom(c.req.header('x-request-id'));
    ids.set(c.req.raw, reqId);
    await next();
    try {
      c.res.headers.set('X-Request-Id', reqId);
    } catch {
      // An immutable response (never ours) keeps its headers.
    }
    const status = c.res.status;
    const job = jobs.get(c.req.raw);
    const line = { reqId, method: c.req.method, route: c.req.routePath, path: c.req.path, status, durationMs: Math.round(performance.now() - started), ...(job ? { job } : {}) };
    if (status >= 500) logger.error(line, 'request');
    else if (status >= 400) logger.warn(line, 'request');
    else if (OPS_PATHS.has(c.req.path)) logger.debug(line, 'request');
    else logger.info(line, 'request');
  };
}
