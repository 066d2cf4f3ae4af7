/**
 * Starts the `web` surface: a client connection and services (its own, or those of the worker
 * process it shares a process with under `fleet up`), the metrics registry, Bull Board (when an
 * admin password is set) and the Node HTTP server. Without API tokens the server
 * binds to 127.0.0.1 whatever FLEET_HTTP_HOST says, and says so. `close()` is idempotent and
 * releases everything in reverse order.
 */
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createFleetMetrics } from '../metrics/fleet-metrics.js';
import { closeRedis, createRedis, redisResolved } from '../redis.js';
import { Releasers } from '../runtime/releasers.js';
import { createServices, type FleetServices } from './services.js';
import { pick } from './pick.js';
import { buildWorkspaceIo } from './build-workspace-io.js';
import { resetWorkspace } from '../provision/reset-workspace.js';
import type { RouteDeps } from '../http/api-route.js';
import { createWebApp } from '../http/create-web-app.js';
import { isLoopbackAddress } from '../http/loopback-only.js';
import { BOARD_PATH } from '../http/board-path.js';
import type { FleetBoard } from '../http/fleet-board.js';

export const LOOPBACK = '127.0.0.1';

export interface WebServer {
  /** `http://host:port` as bound. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly board: FleetBoard | null;
  close(): Promise<void>;
}

export interface StartWebServerOptions {
  /** Configuration with `redis.url` resolved. */
  readonly config: Config;
  readonly logger: Logger;
  /** The services of this process's worker side (`fleet up`): shared, not built again, closed by their owner. */
  readonly services?: FleetServices;
}

/** What the API routes act through, out of the services. */
export function routeDeps(services: FleetServices): RouteDeps {
  return {
    ...pick(services, 'activity', 'addresses', 'archive', 'checkpoints', 'client', 'config', 'intents', 'providerFor', 'runtime', 'events'),
    io: buildWorkspaceIo(services),
    reset: (workspaceId, signal) => resetWorkspace(pick(services, 'addresses', 'archive', 'bases', 'client', 'logger', 'providerFor', 'resets', 'runtime', 'singleFlight'), workspaceId, signal),
  };
}

// Listens and resolves with the bound address.
function listen(app: { fetch: (request: Request) => Response | Promise<Response> }, host: string, port: number): Promise<{ server: ServerType; port: number }> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => resolve({ server, port: info.port }));
    server.once('error', reject);
  });
}

/**
 * Stops accepting connections and lets requests in flight finish (a `?wait=true` call answers
 * when its job does), closing idle keep-alive connections at once; whatever still runs after
 * `graceMs` is cut (80 % of the shutdown grace: the rest of the shutdown needs its time too).
 */
function closeServer(server: ServerType, graceMs: number): Promise<void> {
  const http = server as { closeAllConnections?: () => void; closeIdleConnections?: () => void };
  return new Promise((resolve) => {
    const cut = setTimeout(() => http.closeAllConnections?.(), graceMs);
    cut.unref();
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    http.closeIdleConnections?.();
  });
}

export async function startWebServer({ config, logger, services: shared }: StartWebServerOptions): Promise<WebServer> {
  if (!redisResolved(config.redis)) throw new Error('startWebServer: config.redis must name a Redis (resolve embedded mode first)');
  const releasers = new Releasers();
  try {
    let services = shared;
    if (!services) {
      const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: `fleet-web:${config.hostId}`, logger });
      releasers.add('web connection', () => closeRedis(redis));
      await redis.connect();
      const own = createServices({ config, redis, logger });
      releasers.add('web services', () => own.close());
      services = own;
    }
    const { redis, keys } = services;

    let board: FleetBoard | null = null;
    if (config.admin.password) {
      // Loaded only when enabled: Bull Board's packages are a third of the web stack's start-up.
      const { createFleetBoard } = await import('../http/fleet-board.js');
      board = await createFleetBoard({ redis, keys, config, logger });
      releasers.add('bull board', () => board!.close());
      logger.info({ path: BOARD_PATH, readOnly: config.admin.readOnly }, 'Bull Board enabled (basic auth, user admin)');
    } else {
      logger.info({ path: BOARD_PATH }, 'Bull Board disabled: FLEET_ADMIN_PASSWORD is not set');
    }
    const metrics = createFleetMetrics({ redis, keys, config });
    const app = createWebApp({ config, redis, keys, api: routeDeps(services), metrics, logger, board });

    const host = config.http.host;
    if (config.http.apiTokens.length === 0) {
      const wider = isLoopbackAddress(host) ? '' : `; on ${host} only /healthz, /readyz and /metrics answer other addresses`;
      logger.warn({ host }, `no FLEET_API_TOKENS: the HTTP API is unauthenticated and answers loopback clients only${wider}`);
    }
    const { server, port } = await listen(app, host, config.http.port);
    // Released first (the releasers run newest first): requests in flight still have Redis and the services.
    releasers.add('http server', () => closeServer(server, Math.floor(config.shutdown.graceMs * 0.8)));
    const shownHost = host.includes(':') ? `[${host}]` : host;
    logger.info({ host, port }, 'web listening');
    let closing: Promise<void> | null = null;
    return { url: `http://${shownHost}:${port}`, host, port, board, close: () => (closing ??= releasers.releaseAll()) };
  } catch (error) {
    await releasers.releaseAll().catch(() => undefined);
    throw error;
  }
}
