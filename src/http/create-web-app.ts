/**
 * The `web` process's Hono app: the HTTP API under `/v1` (bearer tokens), `/openapi.json`,
 * `/metrics`, `/healthz`, `/readyz`, and Bull Board under `/admin/queues` (basic auth +
 * same-origin), or a 404 there when no admin password is configured.
 */
import { Hono, type Context } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { BoardDisabledError } from '../errors/board-disabled-error.js';
import { RouteNotFoundError } from '../errors/route-not-found-error.js';
import { redisAddress } from '../redis.js';
import type { Logger } from '../logger.js';
import type { FleetMetrics } from '../metrics/fleet-metrics.js';
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import { accessLog, requestIdOf } from './access-log.js';
import { loopbackOnly } from './loopback-only.js';
import { traceRequest } from './trace-request.js';
import { adminGuard } from './admin-guard.js';
import type { RouteDeps } from './api-route.js';
import { API_ROUTES } from './api-routes.js';
import { errorResponse } from './error-response.js';
import { BOARD_PATH } from './board-path.js';
import type { FleetBoard } from './fleet-board.js';
import { mountApi } from './mount-api.js';
import { openApiDocument } from './openapi-document.js';
import { checkReadiness } from './readiness.js';

export interface WebAppOptions {
  readonly config: Config;
  /** Readiness probes Redis and the heartbeats under these keys. */
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  /** What the API routes act through. */
  readonly api: RouteDeps;
  readonly metrics: FleetMetrics;
  readonly logger: Logger;
  /** Bull Board; `null` disables `/admin/queues` (no admin password). */
  readonly board: FleetBoard | null;
}

export function createWebApp({ config, redis, keys, api, metrics, logger, board }: WebAppOptions): Hono {
  // The trie router runs every matching route in registration order, so where two templates of
  // the table overlap (`files/{path}/history` and `files/{path}`, whose `{path}` takes the rest of
  // the URL) the one registered first answers, as api-routes.ts orders them. Hono's default
  // (RegExpRouter) resolves that overlap to the catch-all whatever the order.
  const app = new Hono({ router: new TrieRouter() });
  const openapi = openApiDocument(API_ROUTES);

  const address = redisAddress(redis);
  app.use('*', accessLog(logger));
  app.use('*', traceRequest());
  app.onError((error, c) => {
    const { status, body, headers } = errorResponse(RedisUnavailableError.from(error, address) ?? error);
    if (status >= 500 && status !== 502 && status !== 504) logger.error({ err: error, reqId: requestIdOf(c), method: c.req.method, path: c.req.path }, 'request failed');
    return c.json(body, status as 500, headers);
  });
  app.notFound((c) => {
    const { status, body } = errorResponse(new RouteNotFoundError(c.req.method, c.req.path));
    return c.json(body, status as 404);
  });

  // No tokens: the API and the board for loopback clients only; probes and scrapes from anywhere.
  if (config.http.apiTokens.length === 0) app.use('*', loopbackOnly());

  app.get('/healthz', (c) => c.json({ status: 'ok', pid: process.pid }));
  app.get('/readyz', async (c) => {
    const readiness = await checkReadiness({ redis, keys, config });
    return c.json(readiness, readiness.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const { contentType, body } = await metrics.render();
    return c.body(body, 200, { 'Content-Type': contentType });
  });
  app.get('/openapi.json', (c) => c.json(openapi));

  if (board && config.admin.password) {
    const guard = adminGuard(config.admin.password, config.http.publicUrl);
    app.use(BOARD_PATH, guard);
    app.use(`${BOARD_PATH}/*`, guard);
    app.route(BOARD_PATH, board.app);
  } else {
    // Off: say so and how to turn it on, rather than "no route".
    const disabled = (c: Context) => {
      const { status, body } = errorResponse(new BoardDisabledError(c.req.path));
      return c.json(body, status as 404);
    };
    app.all(BOARD_PATH, disabled);
    app.all(`${BOARD_PATH}/*`, disabled);
  }
  mountApi(app, API_ROUTES, api, config);
  return app;
}
