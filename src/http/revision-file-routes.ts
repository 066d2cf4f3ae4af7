/**
 * A workspace's kept revisions, file by file: what changed between two revisions (diff), the
 * revisions in which one path changed (history), and one file put back as a revision holds it
 * (restore: a write through the resolver, warm or cold). Format 2 revisions only (501 otherwise).
 *
 * `{path}` of the file routes takes the rest of the URL, so `/files/a/b/history` would reach the
 * GET file route too: these routes come before FILE_ROUTES in the table (api-routes.ts), and the
 * mount registers them in that order, so the first match wins. A file whose path really ends in
 * `/history` is read with its slashes percent-encoded (`/files/a%2Fhistory`, what
 * `encodeURIComponent` gives): the router matches the URL with `%2F` left encoded.
 */
import { z } from 'zod';
import { RevisionId, WorkspaceId, parsePayload } from '../queues/index.js';
import { diffRevisions } from '../workspace-io/revision-diff.js';
import { fileHistory } from '../workspace-io/file-history.js';
import { filePath } from '../workspace-io/io-path.js';
import { restoreFile } from '../workspace-io/restore-file.js';
import { withPathId, type ApiRoute } from './api-route.js';
import { IoSourceSchema, Timestamp } from './response-schemas.js';

const WS = '/v1/workspaces/{workspaceId}';

/** Default and largest `limit` of a diff (entries) and of a history (revisions). */
export const DIFF_LIMIT = { default: 10_000, max: 100_000 } as const;
export const HISTORY_LIMIT = { default: 100, max: 1_000 } as const;

// A whole number query parameter from 1 to `max`.
const count = (max: number) => {
  const error = `must be a whole number from 1 to ${max}`;
  return z
    .string({ error })
    .regex(/^\d{1,7}$/, { error })
    .refine((v) => Number(v) >= 1 && Number(v) <= max, { error });
};

export const DiffQuery = z
  .object({
    from: RevisionId.describe('The older kept revision'),
    to: RevisionId.optional().describe('The newer kept revision (default: the current one)'),
    limit: count(DIFF_LIMIT.max).optional().describe(`Most entries listed, 1-${DIFF_LIMIT.max} (default ${DIFF_LIMIT.default}); past it truncated: true`),
  })
  .strict();

export const HistoryQuery = z
  .object({ limit: count(HISTORY_LIMIT.max).optional().describe(`Most revisions listed, 1-${HISTORY_LIMIT.max} (default ${HISTORY_LIMIT.default})`) })
  .strict();

/** Validates the restore body (the path's workspace id merged in, like every body of the API). */
export const RestoreRequest = z.object({ workspaceId: WorkspaceId, revision: RevisionId.describe('The kept revision to take the file from') }).strict();
export const RestoreBody = RestoreRequest.omit({ workspaceId: true });

const EntryType = z.enum(['file', 'dir', 'symlink', 'other']);

const DiffEntrySchema = z.object({
  path: z.string(),
  type: EntryType,
  size: z.number().int().describe('Size of a file (0 for anything else)'),
  mode: z.number().int(),
  hash: z.string().optional().describe('sha256 of a file\'s content'),
  target: z.string().optional().describe('symlink target (never followed)'),
  previousSize: z.number().int().optional().describe('changed: the size before'),
  previousMode: z.number().int().optional().describe('changed: the mode before'),
  previousHash: z.string().optional().describe('changed: the content id before'),
  previousTarget: z.string().optional().describe('changed: the symlink target before'),
});

export const DiffSchema = z.object({
  workspaceId: z.string(),
  from: z.string(),
  to: z.string(),
  added: z.array(DiffEntrySchema),
  changed: z.array(DiffEntrySchema),
  deleted: z.array(DiffEntrySchema).describe('each as it was in `from`'),
  counts: z.object({ added: z.number().int(), changed: z.number().int(), deleted: z.number().int() }),
  truncated: z.boolean().describe('the answer stopped at limit entries; more changes follow'),
  treesRead: z.number().int().describe('tree objects read to answer (an identical subtree is never read)'),
});

export const HistorySchema = z.object({
  workspaceId: z.string(),
  path: z.string(),
  revisions: z.array(
    z.object({
      revision: z.string(),
      createdAt: Timestamp,
      generation: z.number().int(),
      reason: z.string(),
      change: z.enum(['added', 'changed', 'deleted']),
      type: EntryType.optional().describe('what the path is in this revision (absent when deleted)'),
      size: z.number().int().optional(),
      mode: z.number().int().optional(),
      hash: z.string().optional(),
    }),
  ),
  truncated: z.boolean().describe('older changes exist past the limit, or the kept history ends before its start'),
});

export const RestoreSchema = z.object({ workspaceId: z.string(), path: z.string(), revision: z.string().describe('the revision restored from'), bytes: z.number().int(), source: IoSourceSchema });

const workspaceOf = (params: Readonly<Record<string, string>>) => parsePayload('path', z.object({ workspaceId: WorkspaceId }), { workspaceId: params.workspaceId }).workspaceId;

export const REVISION_FILE_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    scope: 'app',
    path: `${WS}/diff`,
    operationId: 'diffRevisions',
    summary: 'What changed between two kept revisions (format 2 trees compared by id: the cost follows the change, not the tree size)',
    query: DiffQuery,
    waitable: false,
    errorStatuses: [404, 501],
    response: DiffSchema,
    result: '200 { workspaceId, from, to, added, changed, deleted: [{ path, type, size, mode, hash?, previousSize?, ... }], counts, truncated, treesRead }',
    async handle(deps, { params, query }) {
      const workspaceId = workspaceOf(params);
      const limit = Number(query.limit ?? DIFF_LIMIT.default);
      const diff = await diffRevisions(deps, { workspaceId, from: query.from!, ...(query.to ? { to: query.to } : {}), limit });
      return { status: 200, body: diff };
    },
  },
  {
    method: 'get',
    scope: 'app',
    path: `${WS}/files/{path}/history`,
    operationId: 'fileHistory',
    summary: 'The kept revisions in which one path changed (added, changed, deleted), newest first, along the revisions\' parent chain',
    query: HistoryQuery,
    waitable: false,
    errorStatuses: [404, 501],
    response: HistorySchema,
    result: '200 { workspaceId, path, revisions: [{ revision, createdAt, generation, reason, change, type?, size?, mode?, hash? }], truncated }',
    async handle(deps, { params, query }) {
      const workspaceId = workspaceOf(params);
      const { path, parts } = filePath(params.path ?? '');
      const history = await fileHistory(deps, { workspaceId, path, parts, limit: Number(query.limit ?? HISTORY_LIMIT.default) });
      return { status: 200, body: history };
    },
  },
  {
    method: 'post',
    scope: 'app',
    path: `${WS}/files/{path}/restore`,
    operationId: 'restoreFile',
    summary: 'Put one file back as a kept revision holds it (content and mode): a write into the live sandbox, or with none live a new archive revision',
    body: RestoreBody,
    waitable: false,
    errorStatuses: [404, 409, 413, 501, 502, 503, 504, 507],
    response: RestoreSchema,
    result: '200 { workspaceId, path, revision, bytes, source }',
    async handle(deps, { params, body, signal }) {
      const workspaceId = workspaceOf(params);
      // The path first: a hostile path is 400 whatever the body says.
      const { path } = filePath(params.path ?? '');
      const { revision } = parsePayload('restore request', RestoreRequest, withPathId(body, workspaceId));
      return { status: 200, body: await restoreFile(deps, { workspaceId, path, revision, signal }) };
    },
  },
];
