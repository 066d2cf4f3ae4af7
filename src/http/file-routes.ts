/**
 * Workspace files over HTTP, through the one resolver (workspace-io/resolve-workspace-io.ts):
 * warm from the live sandbox, cold from the archive. `{path}` takes the rest of the URL; send it
 * percent-encoded (`encodeURIComponent`) when it ends in a name another route uses.
 */
import { z } from 'zod';
import { RevisionId, WorkspaceId, parsePayload } from '../queues/index.js';
import type { IoSource } from '../workspace-io/workspace-io.js';
import type { ApiRoute } from './api-route.js';
import { IoSourceSchema, Timestamp } from './response-schemas.js';

const WS = '/v1/workspaces/{workspaceId}';

export const ReadQuery = z.object({ revision: RevisionId.optional().describe('Read this kept revision instead of the live tree') }).strict();
export const WriteQuery = z
  .object({ mode: z.string({ error: 'must be a string' }).regex(/^0?[0-7]{3,4}$/, { error: 'must be octal permission bits like 644 or 0755' }).optional().describe('Permission bits (octal); default 644') })
  .strict();
export const TreeQuery = z
  .object({
    path: z.string({ error: 'must be a string' }).max(4_095, { error: 'must be at most 4095 bytes' }).optional().describe('Directory to list, relative to the tree root (default: the root)'),
    revision: RevisionId.optional().describe('List this kept revision instead of the live tree'),
  })
  .strict();

export const TreeEntrySchema = z.object({
  path: z.string(),
  type: z.enum(['file', 'dir', 'symlink', 'other']),
  size: z.number().int(),
  mode: z.number().int(),
  mtime: Timestamp,
  hash: z.string().optional().describe('sha256 of the content (archive entries)'),
  target: z.string().optional().describe('symlink target (never followed)'),
});

export const WriteResultSchema = z.object({ workspaceId: z.string(), path: z.string(), bytes: z.number().int(), source: IoSourceSchema });
export const RemoveResultSchema = z.object({ workspaceId: z.string(), path: z.string(), removed: z.boolean(), source: IoSourceSchema });
export const TreeResultSchema = z.object({ workspaceId: z.string(), path: z.string(), source: IoSourceSchema, entries: z.array(TreeEntrySchema) });

const workspaceOf = (params: Readonly<Record<string, string>>) => parsePayload('path', z.object({ workspaceId: WorkspaceId }), { workspaceId: params.workspaceId }).workspaceId;

/** Where an answer came from, as headers of a byte answer. */
function sourceHeaders(source: IoSource): Record<string, string> {
  return source.kind === 'live' ? { 'X-Fleet-Source': 'live', 'X-Fleet-Generation': String(source.generation) } : { 'X-Fleet-Source': 'archive', ...(source.revision ? { 'X-Fleet-Revision': source.revision } : {}) };
}

const FILE_ERRORS = [404, 409, 501, 502, 503, 504];

export const FILE_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    scope: 'app',
    path: `${WS}/tree`,
    operationId: 'listTree',
    summary: 'List a directory of the workspace: the live tree when a sandbox is live, else (or with revision) the archive',
    query: TreeQuery,
    waitable: false,
    errorStatuses: FILE_ERRORS,
    response: TreeResultSchema,
    result: '200 { workspaceId, path, source, entries: [{ path, type, size, mode, mtime, hash?, target? }] }',
    async handle(deps, { params, query, signal }) {
      const workspaceId = workspaceOf(params);
      const path = query.path ?? '';
      const listed = await deps.io.list({ workspaceId, path, ...(query.revision ? { revision: query.revision } : {}), signal });
      return { status: 200, body: { workspaceId, path, source: listed.source, entries: listed.entries } };
    },
  },
  {
    method: 'get',
    scope: 'app',
    path: `${WS}/files/{path}`,
    operationId: 'readFile',
    summary: 'Read one file: from the live sandbox when one is live, else (or with revision) from the archive; never through a symlink',
    query: ReadQuery,
    produces: 'application/octet-stream',
    waitable: false,
    errorStatuses: [...FILE_ERRORS, 413],
    result: '200 the bytes; X-Fleet-Source: live|archive, X-Fleet-Revision (archive) or X-Fleet-Generation (live)',
    async handle(deps, { params, query, signal }) {
      const workspaceId = workspaceOf(params);
      const read = await deps.io.read({ workspaceId, path: params.path ?? '', ...(query.revision ? { revision: query.revision } : {}), signal });
      return { kind: 'bytes', status: 200, bytes: read.content, contentType: 'application/octet-stream', headers: sourceHeaders(read.source) };
    },
  },
  {
    method: 'put',
    scope: 'app',
    path: `${WS}/files/{path}`,
    operationId: 'writeFile',
    summary: 'Write one file atomically (temp + rename): into the live sandbox, or, with none live, as a new archive revision that the next provision restores',
    bodyKind: 'bytes',
    maxBodyBytes: (config) => config.http.fileMaxBytes,
    query: WriteQuery,
    waitable: false,
    errorStatuses: [...FILE_ERRORS, 507],
    response: WriteResultSchema,
    result: '200 { workspaceId, path, bytes, source }',
    async handle(deps, { params, query, bytes, signal }) {
      const workspaceId = workspaceOf(params);
      const path = params.path ?? '';
      const mode = query.mode === undefined ? undefined : Number.parseInt(query.mode, 8);
      const written = await deps.io.write({ workspaceId, path, content: bytes, ...(mode === undefined ? {} : { mode }), signal });
      return { status: 200, body: { workspaceId, path, bytes: written.bytes, source: written.source } };
    },
  },
  {
    method: 'delete',
    scope: 'app',
    path: `${WS}/files/{path}`,
    operationId: 'removeFile',
    summary: 'Remove a file, a symlink (not its target) or a directory with everything below it; live, or as a new archive revision',
    waitable: false,
    errorStatuses: FILE_ERRORS,
    response: RemoveResultSchema,
    result: '200 { workspaceId, path, removed, source }',
    async handle(deps, { params, signal }) {
      const workspaceId = workspaceOf(params);
      const path = params.path ?? '';
      const removed = await deps.io.remove({ workspaceId, path, signal });
      return { status: 200, body: { workspaceId, path, removed: removed.removed, source: removed.source } };
    },
  },
];
