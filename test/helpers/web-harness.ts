// The web surface on a free loopback port over a workspace harness (real services, real rsync),
// closed by the leak guard's cleanup.
import { startWebServer, type WebServer } from '../../src/app/start-web-server.js';
import { API_ROUTES } from '../../src/http/api-routes.js';
import type { ApiRoute } from '../../src/http/api-route.js';
import { addCleanup } from './cleanup.js';
import { silentLogger } from './fleet-harness.js';
import { createHarness, type Harness } from './workspace-harness.js';

export interface WebHarness extends Harness {
  readonly web: WebServer;
  /** fetch() against the web server; `json` sets the body and content-type. */
  request(path: string, init?: RequestInit & { json?: unknown; token?: string }): Promise<Response>;
}

export async function createWebHarness(overrides: Record<string, string> = {}): Promise<WebHarness> {
  const harness = await createHarness({ FLEET_HTTP_PORT: '0', FLEET_HTTP_HOST: '127.0.0.1', ...overrides });
  const web = await startWebServer({ config: harness.config, logger: silentLogger() });
  addCleanup(() => web.close());
  return {
    ...harness,
    web,
    request(path, { json, token, headers, ...init } = {}) {
      const all = new Headers(headers);
      if (json !== undefined) all.set('content-type', 'application/json');
      if (token !== undefined) all.set('authorization', `Bearer ${token}`);
      const method = init.method ?? (json !== undefined ? 'POST' : 'GET');
      return checkedAnswer(method, path, fetch(`${web.url}${path}`, { ...init, headers: all, ...(json !== undefined ? { body: JSON.stringify(json), method } : {}) }));
    },
  };
}

/** The JSON body of a response together with its status. */
export async function answer<T = Record<string, any>>(response: Response | Promise<Response>): Promise<{ status: number; body: T; headers: Headers }> {
  const r = await response;
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : null) as T, headers: r.headers };
}

// The route a request reaches (the first whose template matches, as the mount registers them),
// matched as the router does: on the path decoded by decodeURI, which leaves `%2F` encoded.
function routeOf(method: string, path: string): ApiRoute | undefined {
  const raw = new URL(path, 'http://x').pathname;
  let pathname = raw;
  try {
    pathname = decodeURI(raw);
  } catch {
    // A malformed escape is matched as sent.
  }
  return API_ROUTES.find((route) => {
    if (route.method.toUpperCase() !== method.toUpperCase()) return false;
    const pattern = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_, name: string) => (name === 'path' ? '.+' : '[^/]+'));
    return new RegExp(`^${pattern}$`).test(pathname);
  });
}

/**
 * Every 2xx JSON answer of a route is checked against the route's `response` schema (the one the
 * OpenAPI document publishes): a route test that gets an untyped or mistyped answer fails.
 */
async function checkedAnswer(method: string, path: string, pending: Promise<Response>): Promise<Response> {
  const response = await pending;
  if (response.status < 200 || response.status > 299 || !(response.headers.get('content-type') ?? '').includes('application/json')) return response;
  const route = routeOf(method, path);
  if (!route) return response;
  if (!route.response) throw new Error(`route ${route.operationId} answered ${response.status} without a response schema`);
  const body = (await response.clone().json()) as unknown;
  const parsed = route.response.safeParse(body);
  if (!parsed.success) throw new Error(`${route.operationId} answered a body its response schema refuses: ${JSON.stringify(parsed.error.issues.slice(0, 3))} in ${JSON.stringify(body).slice(0, 500)}`);
  return response;
}
