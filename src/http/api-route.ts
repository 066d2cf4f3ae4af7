/**
 * One route of the HTTP API as data: the table drives both the Hono mount (mount-api.ts) and the
 * OpenAPI document (openapi-document.ts), so the two cannot drift.
 */
import type { z } from 'zod';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import type { FleetServices } from '../app/services.js';
import type { WaitOptions } from './wait-query.js';

export interface RouteInput {
  /** Path parameters, not yet validated (`workspaceId`). */
  readonly params: Readonly<Record<string, string>>;
  /** The JSON body (`{}` when empty). */
  readonly body: Record<string, unknown>;
  readonly wait: WaitOptions;
}

export interface RouteResult {
  readonly status: 200 | 202;
  readonly body: unknown;
}

export interface ApiRoute {
  readonly method: 'get' | 'post';
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
  handle(services: FleetServices, input: RouteInput): Promise<RouteResult>;
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
