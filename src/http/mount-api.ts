/** Mounts the route table on a Hono app: body limit, bearer auth, JSON body, wait options. */
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Config } from '../config.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import type { ApiRoute, RouteDeps } from './api-route.js';
import { bearerAuth } from './bearer-auth.js';
import { readJsonBody } from './read-json-body.js';
import { resolveWait } from './wait-query.js';

/** `/v1/workspaces/{workspaceId}` → `/v1/workspaces/:workspaceId` */
export const honoPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

export function mountApi(app: Hono, routes: readonly ApiRoute[], deps: RouteDeps, config: Config): void {
  app.use('/v1/*', bearerAuth(config.http.apiTokens));
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: config.http.bodyLimitBytes,
      onError: () => {
        throw new PayloadTooLargeError(config.http.bodyLimitBytes);
      },
    }),
  );
  for (const route of routes) {
    app[route.method](honoPath(route.path), async (c) => {
      const body = route.method === 'post' ? await readJsonBody(c) : {};
      const wait = route.waitable ? resolveWait(c.req.query(), config.http.waitCapMs) : { wait: false, timeoutMs: config.http.waitCapMs };
      const result = await route.handle(deps, { params: c.req.param(), body, wait });
      return c.json(result.body as object, result.status);
    });
  }
}
