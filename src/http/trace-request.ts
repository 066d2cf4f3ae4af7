/**
 * The server span of each HTTP request (while tracing is on), continuing the caller's trace when
 * it sends a W3C `traceparent`: the jobs the request enqueues are its children, and their runs,
 * provider calls and rsync runs theirs. Probes and scrapes get no span.
 */
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { inSpan } from '../observability/tracing.js';
import { requestIdOf } from './access-log.js';
import { OPS_PATHS } from './loopback-only.js';

export function traceRequest(): MiddlewareHandler {
  return async (c, next) => {
    if (OPS_PATHS.has(c.req.path)) return next();
    const carrier: Record<string, string> = {};
    c.req.raw.headers.forEach((value, name) => {
      carrier[name] = value;
    });
    const parent = propagation.extract(context.active(), carrier);
    const attributes = { 'http.request.method': c.req.method, 'url.path': c.req.path, 'fleet.request_id': requestIdOf(c) ?? '' };
    await context.with(parent, () =>
      inSpan(
        `${c.req.method}`,
        attributes,
        async (span) => {
          await next();
          span.updateName(`${c.req.method} ${c.req.routePath}`);
          span.setAttribute('http.route', c.req.routePath);
          span.setAttribute('http.response.status_code', c.res.status);
          if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        },
        SpanKind.SERVER,
      ),
    );
  };
}
