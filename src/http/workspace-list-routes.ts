/** The workspaces as a collection: list them (cursor-paged by id) and reset one (explicit destroy). */
import { z } from 'zod';
import { WorkspaceId, parsePayload } from '../queues/index.js';
import type { ApiRoute } from './api-route.js';
import { AddressSchema, Timestamp } from './response-schemas.js';
import { isoOf, isoOrNull } from './iso-timestamps.js';
import { listWorkspaces } from '../status/list-workspaces.js';
import { deadlineSignal } from '../lib/any-signal.js';

export const ListQuery = z
  .object({
    cursor: WorkspaceId.optional().describe('The nextCursor of the previous page (the last id it held)'),
    limit: z.string({ error: 'must be a number' }).regex(/^\d{1,4}$/, { error: 'must be a whole number from 1 to 1000' }).refine((v) => Number(v) >= 1 && Number(v) <= 1_000, { error: 'must be a whole number from 1 to 1000' }).optional().describe('Page size, 1-1000 (default 100)'),
  })
  .strict();

export const ResetQuery = z.object({ confirm: z.enum(['true'], { error: 'must be true: the history is moved aside and the sandbox destroyed' }) }).strict();

export const ListSchema = z.object({
  workspaces: z.array(z.object({ workspaceId: z.string(), generation: z.number().int(), address: AddressSchema.nullable(), lastActivity: Timestamp.nullable() })),
  nextCursor: z.string().nullable(),
});
export const ResetSchema = z.object({ workspaceId: z.string(), generation: z.number().int(), archiveMovedTo: z.string().nullable(), destroyed: z.string().nullable() });

export const WORKSPACE_LIST_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    scope: 'app',
    path: '/v1/workspaces',
    operationId: 'listWorkspaces',
    filtersWorkspaces: true,
    summary: 'The workspaces the fleet knows, by id, a page at a time (a workspace-limited token sees its own only)',
    query: ListQuery,
    waitable: false,
    errorStatuses: [],
    response: ListSchema,
    result: '200 { workspaces: [{ workspaceId, generation, address, lastActivity }], nextCursor }',
    async handle(deps, { query, allows }) {
      const listing = await listWorkspaces(deps.addresses, { limit: Number(query.limit ?? 100), allows, ...(query.cursor === undefined ? {} : { cursor: query.cursor }) });
      const workspaces = listing.workspaces.map((w) => ({ ...w, address: w.address ? { ...w.address, publishedAt: isoOf(w.address.publishedAt) } : null, lastActivity: isoOrNull(w.lastActivity) }));
      return { status: 200, body: { workspaces, nextCursor: listing.nextCursor } };
    },
  },
  {
    method: 'delete',
    scope: 'app',
    path: '/v1/workspaces/{workspaceId}',
    operationId: 'resetWorkspace',
    summary: 'Start a workspace over (?confirm=true): fence and destroy its sandbox, move its archive history aside (kept on disk, no longer restored)',
    query: ResetQuery,
    waitable: false,
    errorStatuses: [409],
    response: ResetSchema,
    result: '200 { workspaceId, generation, archiveMovedTo, destroyed }',
    async handle(deps, { params, signal }) {
      const workspaceId = parsePayload('path', z.object({ workspaceId: WorkspaceId }), { workspaceId: params.workspaceId }).workspaceId;
      const reset = await deps.reset(workspaceId, deadlineSignal(signal, 120_000));
      await deps.events.emit({ type: 'reset', workspaceId, generation: reset.generation });
      return { status: 200, body: reset };
    },
  },
];
