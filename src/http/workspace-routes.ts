/** Routes of one workspace: provision, persist, exec, checkpoints, describe, revisions, rollback. */
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import { WorkspaceNotFoundError } from '../errors/workspace-not-found-error.js';
import { ProvisionPayload, RollbackInput, parsePayload } from '../queues/index.js';
import { describeWorkspace } from '../status/describe-workspace.js';
import { workspaceHistory } from '../status/workspace-history.js';
import { enqueuedResult, withPathId, type ApiRoute, type RouteDeps } from './api-route.js';
import { CheckpointsBody, CheckpointsRequest, ExecBody, ExecRequest, PathParams, PersistBody, PersistRequest, ProvisionBody, RejectCheckpointBody, RollbackBody, TurnsBody, TurnsRequest } from './request-schemas.js';
import { RejectCheckpointRequest, rejectCheckpoint } from '../producers/reject-checkpoint.js';
import { isoRejectResult, isoTurnResult, isoWorkspaceView } from './iso-timestamps.js';
import { EVENT_STREAM, ExecEventSchema, NDJSON, encodeExecEvent, execEvents, streamFormat } from './exec-events.js';
import {
  CheckpointsResultSchema,
  ExecResultSchema,
  PersistResultSchema,
  ProvisionResultSchema,
  RejectResultSchema,
  RevisionsSchema,
  RollbackResultSchema,
  TurnResultSchema,
  WorkspaceViewSchema,
  waited,
} from './response-schemas.js';
import { anySignal, deadlineSignal } from '../lib/any-signal.js';

// Each event of a stream in its wire format, numbered from 1. Not a generator: a generator
// waiting for its next event would hold a cancel until that event came; this passes it on at once.
function encodeEvents<T>(events: AsyncIterable<T>, encode: (event: T, seq: number) => string): AsyncIterable<string> {
  return {
    [Symbol.asyncIterator]() {
      const inner = events[Symbol.asyncIterator]();
      let seq = 0;
      return {
        next: async () => {
          const next = await inner.next();
          return next.done ? { value: undefined, done: true } : { value: encode(next.value, ++seq), done: false };
        },
        return: async () => {
          await inner.return?.();
          return { value: undefined, done: true };
        },
      };
    },
  };
}

/** Grace past an exec's own deadline for the sandbox to be torn down before the call gives up. */
const EXEC_TEARDOWN_GRACE_MS = 5_000;

const WS = '/v1/workspaces/{workspaceId}';

// The validated workspace id of the path.
const pathId = (params: Readonly<Record<string, string>>): string => parsePayload('path', PathParams, { workspaceId: params.workspaceId }).workspaceId;

// 404 for a workspace the fleet has never seen (no generation, no revisions).
async function knownWorkspace(deps: RouteDeps, workspaceId: string) {
  const view = await describeWorkspace(deps, workspaceId);
  if (view.generation === 0 && !view.address && view.revisions === 0 && !view.currentRevision) {
    throw new WorkspaceNotFoundError(workspaceId, 'unknown workspace');
  }
  return view;
}

export const WORKSPACE_ROUTES: readonly ApiRoute[] = [
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/provision`,
    operationId: 'provisionWorkspace',
    response: waited(ProvisionResultSchema),
    summary: 'Ensure exactly one live sandbox for the workspace (restore by priority)',
    body: ProvisionBody,
    waitable: true,
    errorStatuses: [409, 502, 504],
    result: '202 { queue, jobId }; with wait 200 { queue, jobId, result: { workspaceId, handle, generation, hostId, provider, outcome, source } }',
    async handle(deps, { params, body, wait }) {
      const payload = parsePayload('provision request', ProvisionPayload, withPathId(body, params.workspaceId));
      return enqueuedResult(wait, await deps.client.provision(payload, wait));
    },
  },
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/persist`,
    operationId: 'persistWorkspace',
    response: waited(PersistResultSchema),
    summary: 'Persist the live tree into a new archive revision (delete: true reconciles deletions)',
    body: PersistBody,
    waitable: true,
    errorStatuses: [404, 409, 502, 504],
    result: '202 { queue, jobId, seq }; with wait 200 { queue, jobId, seq, result: { revision, files, bytes, changedFiles, deletedFiles, unchanged, ... } }',
    async handle(deps, { params, body, wait }) {
      const payload = parsePayload('persist request', PersistRequest, withPathId(body, params.workspaceId));
      const address = await deps.addresses.get(payload.workspaceId);
      if (!address) throw new WorkspaceNotFoundError(payload.workspaceId);
      // Fail fast at the edge; the worker's fence stays the authority.
      if (address.generation !== payload.generation) throw new StaleGenerationError(payload.workspaceId, payload.generation, address.generation);
      return enqueuedResult(wait, await deps.client.persist(payload, wait));
    },
  },
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/exec`,
    operationId: 'execWorkspace',
    response: ExecResultSchema,
    streams: { types: [NDJSON, EVENT_STREAM], item: ExecEventSchema },
    summary:
      "Run a command in the workspace's live sandbox (cwd = its tree; namespaced: as the workspace's uid with only its tree in view). With Accept: application/x-ndjson or text/event-stream the output streams as it arrives (stdout, stderr, heartbeat events; exit or error last); otherwise one JSON answer when it ends",
    body: ExecBody,
    waitable: false,
    errorStatuses: [404, 502],
    result: '200 { workspaceId, handle, exitCode, signal, stdout, stderr, timedOut, durationMs } (stdout/stderr: at most 1 MiB each); streamed: one event per line (NDJSON) or per SSE message',
    async handle(deps, { params, body, signal, header }) {
      const request = parsePayload('exec request', ExecRequest, withPathId(body, params.workspaceId));
      const timeoutMs = request.timeoutMs ?? deps.config.deadlines.execMs;
      const format = streamFormat(header('accept'));
      // Through the resolver: a gone sandbox is rebuilt before the command runs; env merges over the allowlist there.
      const run = async (execSignal: AbortSignal, sinks: { onStdout?: (chunk: Buffer) => void; onStderr?: (chunk: Buffer) => void } = {}) => {
        const { source, ...result } = await deps.io.exec({
          workspaceId: request.workspaceId,
          cmd: request.cmd,
          ...(request.cwd ? { cwd: request.cwd } : {}),
          ...(request.env ? { env: request.env } : {}),
          ...(request.stdin === undefined ? {} : { stdin: request.stdin }),
          timeoutMs,
          ...sinks,
          signal: deadlineSignal(execSignal, timeoutMs + EXEC_TEARDOWN_GRACE_MS),
        });
        return { ...result, handle: source.kind === 'live' ? source.handle : '' };
      };
      if (!format) return { status: 200, body: { workspaceId: request.workspaceId, ...(await run(signal)) } };
      // A stream answers 200 before the command ends: what would be an error answer now is one.
      if (!(await deps.addresses.get(request.workspaceId))) throw new WorkspaceNotFoundError(request.workspaceId);
      const stop = new AbortController();
      const events = execEvents((sinks) => run(anySignal([signal, stop.signal]), sinks), () => stop.abort());
      return { kind: 'stream', status: 200, contentType: format, chunks: encodeEvents(events, (event, seq) => encodeExecEvent(format, event, seq)) };
    },
  },
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/checkpoints`,
    operationId: 'checkpointsWorkspace',
    response: CheckpointsResultSchema,
    summary: 'Start or stop the upload-only checkpoint scheduler of the workspace',
    body: CheckpointsBody,
    waitable: false,
    errorStatuses: [404],
    result: '200 { workspaceId, action: "start", schedulerId, queue } or { workspaceId, action: "stop", removed }',
    async handle(deps, { params, body }) {
      const request = parsePayload('checkpoints request', CheckpointsRequest, withPathId(body, params.workspaceId));
      if (request.action === 'stop') {
        return { status: 200, body: { workspaceId: request.workspaceId, action: 'stop', removed: await deps.client.stopCheckpoints(request.workspaceId) } };
      }
      const started = await deps.client.startCheckpoints(request.workspaceId, {
        ...(request.generation === undefined ? {} : { generation: request.generation }),
        ...(request.everyMs === undefined ? {} : { everyMs: request.everyMs }),
      });
      return { status: 200, body: { workspaceId: request.workspaceId, action: 'start', ...started } };
    },
  },
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/checkpoints/reject`,
    operationId: 'rejectCheckpoint',
    response: RejectResultSchema,
    summary:
      "Reject a checkpoint whose turn failed: the workspace falls back to the previous attached checkpoint (fenced on generation; a no-op when something newer already decided); answers what is current now. Give the checkpointId or the revision a persist answered. The live tree is not touched.",
    body: RejectCheckpointBody,
    waitable: false,
    errorStatuses: [404, 409],
    result: '200 { workspaceId, checkpointId, rejected, current: { checkpointId, revision, kind, generation, reason, turnId, attachedAt } | null }',
    async handle(deps, { params, body }) {
      // The web process reaches the archive: its `current` link follows the new head at once.
      const request = parsePayload('reject checkpoint request', RejectCheckpointRequest, withPathId(body, params.workspaceId));
      return { status: 200, body: isoRejectResult(await rejectCheckpoint({ checkpoints: deps.checkpoints, archive: deps.archive }, request)) };
    },
  },
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/turns`,
    operationId: 'turnWorkspace',
    response: TurnResultSchema,
    summary: 'Open or close a turn: the workspace is not idle (never reaped) while a turn is open; an open turn expires after ttlMs (default FLEET_TURN_TTL_MS)',
    body: TurnsBody,
    waitable: false,
    errorStatuses: [404],
    result: '200 { workspaceId, turnId, open, expiresAt (ISO 8601), wasOpen? }',
    async handle(deps, { params, body }) {
      const { action, ...request } = parsePayload('turn request', TurnsRequest, withPathId(body, params.workspaceId));
      const result = action === 'open' ? await deps.client.openTurn(request) : await deps.client.closeTurn({ workspaceId: request.workspaceId, turnId: request.turnId });
      return { status: 200, body: isoTurnResult(result) };
    },
  },
  {
    method: 'get',
    scope: 'app',
    path: WS,
    operationId: 'describeWorkspace',
    response: WorkspaceViewSchema,
    summary: 'Address, generation, runtime resource, current revision and persist lag',
    waitable: false,
    errorStatuses: [404],
    result: '200 { workspaceId, generation, address, runtime, currentRevision, revisions, persistLagMs }',
    async handle(deps, { params }) {
      return { status: 200, body: isoWorkspaceView(await knownWorkspace(deps, pathId(params))) };
    },
  },
  {
    method: 'get',
    scope: 'app',
    path: `${WS}/revisions`,
    operationId: 'listRevisions',
    response: RevisionsSchema,
    summary: "The workspace's revisions, newest first",
    waitable: false,
    errorStatuses: [404],
    result: '200 { workspaceId, revisions: [{ revision, checkpointId, kind, generation, reason, turnId, files, bytes, attached, current, createdAt }] }',
    async handle(deps, { params }) {
      const workspaceId = pathId(params);
      await knownWorkspace(deps, workspaceId);
      return { status: 200, body: { workspaceId, revisions: await workspaceHistory(deps, workspaceId) } };
    },
  },
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/rollback`,
    operationId: 'rollbackWorkspace',
    response: waited(RollbackResultSchema),
    summary: "Make an earlier revision's content current again (as a new revision) and restore the live tree",
    body: RollbackBody,
    waitable: true,
    errorStatuses: [404, 409, 502, 504],
    result: '202 { queue, jobId }; with wait 200 { queue, jobId, result: { revision, restoredFrom, generation, files, durationMs } }',
    async handle(deps, { params, body, wait }) {
      const payload = parsePayload('rollback request', RollbackInput, withPathId(body, params.workspaceId));
      return enqueuedResult(wait, await deps.client.rollback(payload, wait));
    },
  },
];
