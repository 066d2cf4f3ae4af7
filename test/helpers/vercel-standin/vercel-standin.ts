/**
 * A loopback stand-in of the Vercel Sandbox API (the endpoints `@vercel/sandbox@3.5.0` calls),
 * faithful to /work/shared/reference/vercel-sandbox.md: named sandboxes with sessions, resume and
 * 410 for stopped sessions, NDJSON command streams of commands that really run on this host,
 * gzip-tar uploads extracted to disk, file reads, snapshots that copy the sandbox's directory.
 *
 * Each sandbox's `/` is a directory under a temp root; commands run with their cwd mapped into
 * it, so relative paths behave as in a real sandbox, absolute ones reach the host (a limit).
 *
 * Fault injection: `faults.add(route, fault, times)` makes the next requests of a route hang,
 * answer an error status, or drop the connection; `refuseConnections()` closes the listener.
 * Events (`events`): recorded, request, fault, hang, create, delete, resume, snapshot, command, write;
 * `nextRequest(route, accept)` waits for a request instead of sleeping.
 */
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { HandlerContext, LifecycleContext, StandinConfig } from './standin-context.js';
import { stopSandbox } from './standin-lifecycle.js';
import { StandinFaults } from './standin-faults.js';
import { ApiFailure, sendError } from './standin-http.js';
import { matchRoute, type RouteName } from './standin-routes.js';
import { createState, type StandinSandbox, type StandinState } from './standin-state.js';
import { hostPath } from './standin-fs.js';

export interface StandinOptions {
  readonly token?: string;
  readonly teamId?: string;
  readonly projectId?: string;
  /** Largest page of list endpoints. @default 50 */
  readonly pageSize?: number;
}

export interface RecordedRequest {
  readonly route: RouteName | null;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
}

export class VercelStandin {
  readonly events = new EventEmitter();
  readonly faults = new StandinFaults();
  readonly requests: RecordedRequest[] = [];
  readonly state: StandinState = createState();
  private readonly server: Server;
  private port = 0;
  private gate: { promise: Promise<void>; open: () => void } | null = null;

  private constructor(readonly config: StandinConfig) {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  /** Starts a stand-in on 127.0.0.1 and a free port. */
  static async start(options: StandinOptions = {}): Promise<VercelStandin> {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'vercel-standin-'));
    const standin = new VercelStandin({
      token: options.token ?? 'standin-token',
      teamId: options.teamId ?? 'team_standin',
      projectId: options.projectId ?? 'prj_standin',
      dataDir,
      pageSize: options.pageSize ?? 50,
    });
    await standin.listen(0);
    return standin;
  }

  /** The base URL replacing `https://vercel.com/api`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Credentials the stand-in accepts. */
  get credentials(): { token: string; teamId: string; projectId: string } {
    return { token: this.config.token, teamId: this.config.teamId, projectId: this.config.projectId };
  }

  /**
   * The sandbox a fleet handle (`vercel:<name>:g<gen>`) or a sandbox name names, if the stand-in
   * holds it: for a handle, only while the sandbox under the name carries that generation.
   */
  sandbox(handleOrName: string): StandinSandbox | undefined {
    const durable = /^vercel:([A-Za-z0-9_-]+):g(\d+)$/.exec(handleOrName);
    const sandbox = this.state.sandboxes.get(durable ? durable[1]! : handleOrName);
    return durable && sandbox?.tags?.['fleet-generation'] !== durable[2] ? undefined : sandbox;
  }

  /** The host directory standing for `sandboxPath` inside sandbox `name` (or a handle's). */
  sandboxDir(name: string, sandboxPath = '/vercel/sandbox'): string {
    const sandbox = this.sandbox(name);
    if (!sandbox) throw new Error(`no sandbox ${name} in the stand-in`);
    return hostPath(sandbox.root, sandboxPath);
  }

  /** Resolves with the next request of `route` that satisfies `accept` (recorded from now on). */
  nextRequest(route: RouteName, accept: (request: RecordedRequest) => boolean = () => true): Promise<RecordedRequest> {
    return new Promise((resolve) => {
      const onRequest = (request: RecordedRequest) => {
        if (request.route !== route || !accept(request)) return;
        this.events.off('recorded', onRequest);
        resolve(request);
      };
      this.events.on('recorded', onRequest);
    });
  }

  /** Ends the current session of `name` as a timeout would (stopped, files kept if persistent). */
  expireSession(name: string): void {
    const sandbox = this.sandbox(name);
    if (!sandbox) throw new Error(`no sandbox ${name} in the stand-in`);
    for (const command of sandbox.session.commands.values()) if (command.exitCode === null) command.kill('SIGKILL');
    sandbox.session.status = 'stopped';
    sandbox.session.stoppedAt = Date.now();
    sandbox.session.updatedAt = Date.now();
  }

  /**
   * Ends the session of sandbox `name` as Vercel does when its timeout passes: a persistent
   * sandbox records an auto-snapshot (its `currentSnapshotId`), which the next session resumes from.
   */
  async timeOutSession(name: string): Promise<void> {
    const sandbox = this.sandbox(name);
    if (!sandbox) throw new Error(`no sandbox ${name} in the stand-in`);
    for (const command of sandbox.session.commands.values()) if (command.exitCode === null) command.kill('SIGKILL');
    await stopSandbox(this.lifecycleContext(), sandbox);
  }

  /** Makes sandbox `name` look `ageMs` older to the API (its `createdAt`), instead of waiting. */
  backdate(name: string, ageMs: number): void {
    const sandbox = this.sandbox(name);
    if (!sandbox) throw new Error(`no sandbox ${name} in the stand-in`);
    sandbox.createdAt -= ageMs;
  }

  /** Holds manual snapshot copies (the session stays `snapshotting`) until the returned function runs. */
  holdSnapshots(): () => void {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.gate = { promise, open };
    return () => {
      this.gate = null;
      open();
    };
  }

  /** Stops listening and drops every open connection: clients get ECONNREFUSED. */
  async refuseConnections(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** Listens again on the same port after `refuseConnections()`. */
  async acceptConnections(): Promise<void> {
    await this.listen(this.port);
  }

  /** Stops the server, kills running commands and removes the temp root. */
  async close(): Promise<void> {
    this.gate?.open();
    for (const session of this.state.sessions.values()) {
      for (const command of session.commands.values()) command.kill('SIGKILL');
    }
    await Promise.all([...this.state.sessions.values()].flatMap((session) => [...session.commands.values()].map((command) => command.done)));
    if (this.server.listening) await this.refuseConnections();
    await rm(this.config.dataDir, { recursive: true, force: true });
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.port = (this.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private lifecycleContext(): LifecycleContext {
    return { state: this.state, config: this.config, hooks: this.hooks() };
  }

  private hooks(): HandlerContext['hooks'] {
    return { snapshotGate: () => this.gate?.promise ?? Promise.resolve(), emit: (event, detail) => this.emit(event, detail) };
  }

  private emit(event: string, detail: Record<string, unknown>): void {
    this.events.emit(event, detail);
  }

  // Routing, faults, authentication, then the handler; handler failures become API error bodies.
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const matched = matchRoute(req.method ?? 'GET', url.pathname);
    const recorded: RecordedRequest = { route: matched?.route.name ?? null, method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers };
    this.requests.push(recorded);
    this.events.emit('recorded', recorded);
    this.emit('request', { route: matched?.route.name ?? null, method: req.method, path: url.pathname });
    try {
      if (!matched) throw new ApiFailure(404, 'not_found', `No route for ${req.method} ${url.pathname}`);
      const fault = this.faults.take(matched.route.name);
      if (fault) {
        this.emit('fault', { route: matched.route.name, kind: fault.kind });
        if (fault.kind === 'hang') {
          this.emit('hang', { route: matched.route.name });
          return;
        }
        if (fault.kind === 'drop') {
          req.socket.destroy();
          return;
        }
        const headers: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
        sendError(res, fault.status, fault.code ?? 'injected', fault.message ?? `Injected ${fault.status}`, {}, headers);
        return;
      }
      this.authenticate(req, url);
      const ctx: HandlerContext = {
        req,
        res,
        url,
        params: matched.params,
        state: this.state,
        config: this.config,
        hooks: this.hooks(),
      };
      await matched.route.handler(ctx);
    } catch (error) {
      if (res.headersSent) {
        res.destroy(error as Error);
        return;
      }
      if (error instanceof ApiFailure) sendError(res, error.status, error.code, error.message, error.extra);
      else sendError(res, 500, 'internal_server_error', (error as Error).message);
    }
  }

  // Bearer token and team as the SDK sends them (reference §8): wrong ones are refused.
  private authenticate(req: IncomingMessage, url: URL): void {
    const header = req.headers.authorization;
    if (header === undefined || !header.startsWith('Bearer ')) throw new ApiFailure(401, 'unauthorized', 'Missing bearer token');
    if (header !== `Bearer ${this.config.token}`) throw new ApiFailure(403, 'forbidden', 'Not authorized', { invalidToken: true });
    if (url.searchParams.get('teamId') !== this.config.teamId) throw new ApiFailure(403, 'forbidden', 'You do not have access to this team');
  }
}
