/**
 * One route of the HTTP API as data: the table drives both the Hono mount (mount-api.ts) and the
 * OpenAPI document (openapi-document.ts), so the two cannot drift.
 */
import type { z } from 'zod';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { Config } from '../config.js';
import type { FleetClient } from '../producers/fleet-client.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { Address, AddressStore } from '../state/address-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { DescribeDeps } from '../status/describe-workspace.js';
import type { HistoryDeps } from '../status/workspace-history.js';
import type { WaitOptions } from './wait-query.js';
import type { WorkspaceIo } from '../workspace-io/workspace-io.js';
import type { ResetResult } from '../provision/reset-workspace.js';
import type { EventStore } from '../state/event-store.js';

/** What the API's routes act through: the fleet's client, the workspace records, the archive. */
export interface RouteDeps extends DescribeDeps, HistoryDeps {
  readonly addresses: Pick<AddressStore, 'get' | 'generation' | 'touch' | 'known' | 'lastActivity'>;
  readonly archive: ArchiveStore;
  readonly checkpoints: CheckpointStore;
  readonly client: Pick<FleetClient, 'backfill' | 'bake' | 'gc' | 'openTurn' | 'closeTurn' | 'persist' | 'provision' | 'rollback' | 'startCheckpoints' | 'stopCheckpoints' | 'pool'>;
  readonly config: Pick<Config, 'deadlines' | 'exec' | 'http'>;
  /** Starts a workspace over (provision/reset-workspace.ts). */
  reset(workspaceId: string, signal: AbortSignal): Promise<ResetResult>;
  /** What the fleet did (`GET /v1/events`), and where a route records what it did itself. */
  readonly events: Pick<EventStore, 'emit' | 'newest' | 'oldest' | 'lostAfter' | 'reader'>;
  /** Workspace files and commands, warm or cold (workspace-io/resolve-workspace-io.ts). */
  readonly io: WorkspaceIo;
  providerFor(address: Address): SandboxProvider;
}

export interface RouteInput {
  /** Path parameters, not yet validated (`workspaceId`, `path`). */
  readonly params: Readonly<Record<string, string>>;
  /** The JSON body (`{}` when empty, or when the route takes bytes). */
  readonly body: Record<string, unknown>;
  /** The raw body of a route with `bodyKind: 'bytes'` (capped by the route's `maxBodyBytes`); empty otherwise. */
  readonly bytes: Buffer;
  /** Query parameters, validated by the route's `query` schema when it has one. */
  readonly query: Readonly<Record<string, string>>;
  /** Request headers, lower-cased names (`last-event-id`, `accept`). */
  readonly header: (name: string) => string | undefined;
  readonly wait: WaitOptions;
  /** Whether the request's token may see `workspaceId` (listings filter with it). */
  readonly allows: (workspaceId: string) => boolean;
  /** Aborts when the client goes away (a stream stops, a long call gives up). */
  readonly signal: AbortSignal;
}

/** Who may call a route: app pods (workspace I/O and lifecycle) or operators (bake, gc, backfill, queues). */
export type RouteScope = 'app' | 'operator';

/** What a route answers: JSON (the default), raw bytes, or a stream of text/bytes chunks (NDJSON, SSE). */
export type RouteResult =
  | { readonly kind?: 'json'; readonly status: 200 | 201 | 202; readonly body: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'bytes'; readonly status: 200; readonly bytes: Buffer; readonly contentType: string; readonly headers?: Readonly<Record<string, string>> }
  | {
      readonly kind: 'stream';
      readonly status: 200;
      readonly contentType: string;
      readonly chunks: AsyncIterable<string | Uint8Array>;
      readonly headers?: Readonly<Record<string, string>>;
    };

export interface ApiRoute {
  readonly method: 'get' | 'post' | 'put' | 'delete';
  /** App or operator route (scoped tokens). */
  readonly scope: RouteScope;
  /** Names no workspace but answers only those the token may see (a workspace-limited token is admitted). */
  readonly filtersWorkspaces?: boolean;
  /** How the body is read: JSON (default for post/put), raw bytes, or none (default for get/delete). */
  readonly bodyKind?: 'json' | 'bytes' | 'none';
  /** The largest body accepted (default FLEET_HTTP_BODY_LIMIT_BYTES). */
  readonly maxBodyBytes?: (config: Config) => number;
  /** Documented and validated query parameters (each a string field). */
  readonly query?: z.ZodObject;
  /** Content type of the success answer. @default application/json */
  readonly produces?: 'application/json' | 'application/octet-stream' | 'application/x-ndjson' | 'text/event-stream';
  /** Schema of the success body (JSON routes), for the OpenAPI document and the response test. */
  readonly response?: z.ZodType;
  /**
   * Streamed answers the route also gives when the request's Accept header asks for one (the
   * JSON answer stays the default), with the schema of each streamed item.
   */
  readonly streams?: { readonly types: readonly ('application/x-ndjson' | 'text/event-stream')[]; readonly item: z.ZodType };
  /** OpenAPI path template, e.g. `/v1/workspaces/{workspaceId}/persist`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  /** Documented body schema (the validating schema adds the path's workspaceId). */
  readonly body?: z.ZodType;
  /** Accepts `?wait=true&timeoutMs=N`. */
  readonly waitable: boolean;
  /** Statuses this route can answer besides 400/401/413/415/500, for the document. */
  readonly errorStatuses: readonly number[];
  /** Describes the success body. */
  readonly result: string;
  handle(deps: RouteDeps, input: RouteInput): Promise<RouteResult>;
}

/** The body with the path's workspace id merged in; a conflicting id in the body is refused. */
export function withPathId(body: Record<string, unknown>, workspaceId: string | undefined): Record<string, unknown> {
  if ('workspaceId' in body && body.workspaceId !== workspaceId) {
    throw new PayloadInvalidError('request body', [{ field: 'workspaceId', message: 'must be omitted or equal the workspace id in the path', value: body.workspaceId }]);
  }
  return { ...body, workspaceId };
}

/** 200 with the job result after a wait, 202 with the job id otherwise. */
export function enqueuedResult(wait: WaitOptions, enqueued: unknown): RouteResult {
  return { status: wait.wait ? 200 : 202, body: enqueued };
}
