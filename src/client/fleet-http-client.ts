/**
 * The fleet's HTTP API as typed TypeScript calls, for app pods that reach the fleet over HTTP
 * (the Redis client, `createFleetClient`, needs the fleet's Redis and, for files, its archive):
 * workspace lifecycle, files warm or cold through the one resolver, exec with its output as it
 * arrives, diff, history, single-file restore, jobs and events. Every error answer throws the
 * fleet's own error class (`instanceof StaleGenerationError` holds); `{ wait: true }` answers
 * carry a result that is never optional.
 */
import type { z } from 'zod';
import type { ExecEvent } from '../http/exec-events.js';
import type { JobViewSchema } from '../http/job-routes.js';
import type { RemoveResultSchema, TreeResultSchema, WriteResultSchema } from '../http/file-routes.js';
import type { DiffSchema, HistorySchema, RestoreSchema } from '../http/revision-file-routes.js';
import type { ListSchema, ResetSchema } from '../http/workspace-list-routes.js';
import type { ExecResultSchema, RevisionsSchema, WorkspaceViewSchema } from '../http/response-schemas.js';
import type { PersistResult, ProvisionResult, RollbackResult } from '../queues/index.js';
import type { FleetEvent, FleetEventType } from '../state/fleet-event.js';
import { isFleetError } from '../errors/fleet-error.js';
import { errorOf, HttpTransport, sseData, splitStream, type HttpTransportOptions } from './http-transport.js';

export type FleetHttpClientOptions = HttpTransportOptions;

export interface HttpWaitOptions {
  readonly wait?: boolean;
  /** Cap of the wait (the server caps it at FLEET_HTTP_WAIT_CAP_MS). */
  readonly timeoutMs?: number;
}

export interface HttpEnqueued<R> {
  readonly queue: string;
  readonly jobId: string;
  readonly result?: R;
}

export type HttpWaited<R> = HttpEnqueued<R> & { readonly result: R };

/** A call that enqueues a job: with `{ wait: true }` the answer carries its result. */
export interface HttpEnqueueCall<I, R, X = unknown> {
  (workspaceId: string, input: I, options: HttpWaitOptions & { readonly wait: true }): Promise<HttpWaited<R> & X>;
  (workspaceId: string, input: I, options?: HttpWaitOptions): Promise<HttpEnqueued<R> & X>;
}

export interface ProvisionBody {
  readonly provider?: 'local' | 'vercel';
  readonly lane?: string;
  readonly requestedBy?: string;
}
export interface PersistBody {
  readonly generation: number;
  readonly delete?: boolean;
  readonly reason?: 'turn-end' | 'checkpoint' | 'idle-reap' | 'shutdown' | 'manual';
  readonly turnId?: string;
  readonly force?: boolean;
}
export interface RollbackBody {
  readonly revision: string;
  readonly generation?: number;
}

export interface ExecInput {
  readonly cmd: readonly string[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Text the command reads on its stdin (at most 1 MiB). */
  readonly stdin?: string;
  /** The command's deadline. @default FLEET_EXEC_DEADLINE_MS */
  readonly timeoutMs?: number;
  /** Output as it arrives (UTF-8 text). */
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
  readonly signal?: AbortSignal;
}

export type ExecAnswer = z.infer<typeof ExecResultSchema>;
export type JobView = z.infer<typeof JobViewSchema>;
export type TreeAnswer = z.infer<typeof TreeResultSchema>;
export type WriteAnswer = z.infer<typeof WriteResultSchema>;
export type RemoveAnswer = z.infer<typeof RemoveResultSchema>;
export type DiffAnswer = z.infer<typeof DiffSchema>;
export type HistoryAnswer = z.infer<typeof HistorySchema>;
export type RestoreAnswer = z.infer<typeof RestoreSchema>;
export type WorkspaceList = z.infer<typeof ListSchema>;
export type ResetAnswer = z.infer<typeof ResetSchema>;
export type WorkspaceView = z.infer<typeof WorkspaceViewSchema>;
export type Revisions = z.infer<typeof RevisionsSchema>;

export interface EventsOptions {
  readonly workspaceId?: string;
  readonly types?: readonly FleetEventType[];
  /** Resume after this event id (what `event.id` said). */
  readonly after?: string;
  /** Ends the stream. */
  readonly signal?: AbortSignal;
  /** Reconnect after a dropped connection, resuming after the last event. @default true */
  readonly reconnect?: boolean;
}

export interface FleetHttpClient {
  readonly provision: HttpEnqueueCall<ProvisionBody, ProvisionResult>;
  readonly persist: HttpEnqueueCall<PersistBody, PersistResult, { seq: number }>;
  readonly rollback: HttpEnqueueCall<RollbackBody, RollbackResult>;
  describe(workspaceId: string): Promise<WorkspaceView>;
  revisions(workspaceId: string): Promise<Revisions>;
  workspaces(options?: { cursor?: string; limit?: number }): Promise<WorkspaceList>;
  /** Starts a workspace over: its sandbox destroyed, its history moved aside. */
  reset(workspaceId: string): Promise<ResetAnswer>;
  job(queue: string, jobId: string): Promise<JobView>;
  readFile(workspaceId: string, path: string, options?: { revision?: string }): Promise<Buffer>;
  writeFile(workspaceId: string, path: string, content: string | Uint8Array, options?: { mode?: number }): Promise<WriteAnswer>;
  removeFile(workspaceId: string, path: string): Promise<RemoveAnswer>;
  list(workspaceId: string, options?: { path?: string; revision?: string }): Promise<TreeAnswer>;
  diff(workspaceId: string, options: { from: string; to?: string; limit?: number }): Promise<DiffAnswer>;
  history(workspaceId: string, path: string, options?: { limit?: number }): Promise<HistoryAnswer>;
  restoreFile(workspaceId: string, path: string, revision: string): Promise<RestoreAnswer>;
  /** Runs a command; its output reaches `onStdout`/`onStderr` as it arrives; the answer keeps the first MiB of each. */
  exec(workspaceId: string, input: ExecInput): Promise<ExecAnswer>;
  /** What the fleet does, as it happens (reconnecting after the last event seen). */
  events(options?: EventsOptions): AsyncIterable<FleetEvent>;
}

/** A tree path as a URL path (each segment percent-encoded, `/` kept). */
const filePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');
const ws = (workspaceId: string) => `/v1/workspaces/${encodeURIComponent(workspaceId)}`;
/** Waits between reconnects of the event stream, growing while the server stays away. */
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;

// Resolves after `ms`, or at once when `signal` aborts.
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Output kept for an exec's answer per stream, as the server's JSON answer keeps. */
const KEPT_OUTPUT = 1_048_576;

export function createFleetHttpClient(options: FleetHttpClientOptions): FleetHttpClient {
  const http = new HttpTransport(options);

  // An enqueueing route: `?wait=true` when asked.
  const enqueue = <I, R, X>(route: string) =>
    ((workspaceId: string, input: I, wait: HttpWaitOptions = {}) =>
      http.json({ method: 'POST', path: `${ws(workspaceId)}/${route}`, json: input, query: wait.wait ? { wait: true, timeoutMs: wait.timeoutMs } : {} })) as HttpEnqueueCall<I, R, X>;

  return {
    provision: enqueue<ProvisionBody, ProvisionResult, unknown>('provision'),
    persist: enqueue<PersistBody, PersistResult, { seq: number }>('persist'),
    rollback: enqueue<RollbackBody, RollbackResult, unknown>('rollback'),
    describe: (workspaceId) => http.json({ method: 'GET', path: ws(workspaceId) }),
    revisions: (workspaceId) => http.json({ method: 'GET', path: `${ws(workspaceId)}/revisions` }),
    workspaces: (page = {}) => http.json({ method: 'GET', path: '/v1/workspaces', query: { cursor: page.cursor, limit: page.limit } }),
    reset: (workspaceId) => http.json({ method: 'DELETE', path: ws(workspaceId), query: { confirm: true } }),
    job: (queue, jobId) => http.json({ method: 'GET', path: `/v1/jobs/${encodeURIComponent(queue)}/${encodeURIComponent(jobId)}` }),
    async readFile(workspaceId, path, read = {}) {
      const response = await http.send({ method: 'GET', path: `${ws(workspaceId)}/files/${filePath(path)}`, query: { revision: read.revision } });
      return Buffer.from(await response.arrayBuffer());
    },
    writeFile: (workspaceId, path, content, write = {}) =>
      http.json({ method: 'PUT', path: `${ws(workspaceId)}/files/${filePath(path)}`, bytes: typeof content === 'string' ? Buffer.from(content) : content, query: { mode: write.mode === undefined ? undefined : write.mode.toString(8) } }),
    removeFile: (workspaceId, path) => http.json({ method: 'DELETE', path: `${ws(workspaceId)}/files/${filePath(path)}` }),
    list: (workspaceId, at = {}) => http.json({ method: 'GET', path: `${ws(workspaceId)}/tree`, query: { path: at.path, revision: at.revision } }),
    diff: (workspaceId, range) => http.json({ method: 'GET', path: `${ws(workspaceId)}/diff`, query: { from: range.from, to: range.to, limit: range.limit } }),
    history: (workspaceId, path, page = {}) => http.json({ method: 'GET', path: `${ws(workspaceId)}/files/${filePath(path)}/history`, query: { limit: page.limit } }),
    restoreFile: (workspaceId, path, revision) => http.json({ method: 'POST', path: `${ws(workspaceId)}/files/${filePath(path)}/restore`, json: { revision } }),

    async exec(workspaceId, input) {
      const { onStdout, onStderr, signal, ...body } = input;
      const response = await http.send({ method: 'POST', path: `${ws(workspaceId)}/exec`, json: body, headers: { accept: 'application/x-ndjson' }, stream: true, ...(signal ? { signal } : {}) });
      const kept = { stdout: '', stderr: '' };
      for await (const line of splitStream(response, '\n')) {
        const event = JSON.parse(line) as ExecEvent;
        if (event.type === 'stdout' || event.type === 'stderr') {
          if (kept[event.type].length < KEPT_OUTPUT) kept[event.type] += event.data.slice(0, KEPT_OUTPUT - kept[event.type].length);
          (event.type === 'stdout' ? onStdout : onStderr)?.(event.data);
        } else if (event.type === 'exit') {
          return { workspaceId, handle: event.handle, exitCode: event.exitCode, signal: event.signal, stdout: kept.stdout, stderr: kept.stderr, timedOut: event.timedOut, durationMs: event.durationMs };
        } else if (event.type === 'error') {
          throw await errorOf(new Response(JSON.stringify({ error: event.error }), { status: 502 }));
        }
      }
      throw await errorOf(new Response(JSON.stringify({ error: { code: 'StreamEnded', message: `the exec stream of ${workspaceId} ended before the command's exit`, retryable: true } }), { status: 502 }));
    },

    events(follow = {}) {
      return {
        async *[Symbol.asyncIterator]() {
          let after = follow.after;
          let pause = RECONNECT_MIN_MS;
          for (;;) {
            try {
              const response = await http.send({
                method: 'GET',
                path: '/v1/events',
                query: { workspaceId: follow.workspaceId, types: follow.types?.join(',') },
                headers: { accept: 'text/event-stream', ...(after ? { 'last-event-id': after } : {}) },
                stream: true,
                ...(follow.signal ? { signal: follow.signal } : {}),
              });
              for await (const message of splitStream(response, '\n\n')) {
                const data = sseData(message);
                if (data === null) continue;
                const event = JSON.parse(data) as FleetEvent;
                if (event.type !== 'lost') after = event.id;
                pause = RECONNECT_MIN_MS;
                yield event;
              }
            } catch (error) {
              // An answer of the server (a bad filter, a refused token) is final; a dropped connection is not.
              if (follow.signal?.aborted || follow.reconnect === false || isFleetError(error)) throw error;
            }
            if (follow.signal?.aborted || follow.reconnect === false) return;
            await sleep(pause, follow.signal);
            pause = Math.min(pause * 2, RECONNECT_MAX_MS);
          }
        },
      };
    },
  };
}
