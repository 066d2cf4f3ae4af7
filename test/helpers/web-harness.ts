// The web surface on a free loopback port over a workspace harness (real services, real rsync),
// closed by the leak guard's cleanup.
import { startWebServer, type WebServer } from '../../src/app/start-web-server.js';
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
      return fetch(`${web.url}${path}`, { ...init, headers: all, ...(json !== undefined ? { body: JSON.stringify(json), method: init.method ?? 'POST' } : {}) });
    },
  };
}

/** The JSON body of a response together with its status. */
export async function answer<T = Record<string, any>>(response: Response | Promise<Response>): Promise<{ status: number; body: T; headers: Headers }> {
  const r = await response;
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : null) as T, headers: r.headers };
}
