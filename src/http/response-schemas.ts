/**
 * Schemas of the API's success bodies: the OpenAPI document types every response from them, and
 * the route tests check every answer against them. Timestamps are ISO 8601 UTC strings
 * everywhere in the API (iso-timestamps.ts converts the stores' epoch milliseconds at the edge).
 */
import { z } from 'zod';

export const Timestamp = z.iso.datetime().describe('ISO 8601 UTC, e.g. 2026-12-02T19:00:00.000Z');

const Provider = z.enum(['local', 'vercel']);

/** Where a workspace file operation was answered: the live sandbox, or the archive (a cold write's new revision). */
export const IoSourceSchema = z.union([
  z.object({ kind: z.literal('live'), handle: z.string(), generation: z.number().int() }),
  z.object({ kind: z.literal('archive'), revision: z.string().nullable() }),
]);

export const ProvisionResultSchema = z.object({
  workspaceId: z.string(),
  handle: z.string(),
  generation: z.number().int(),
  hostId: z.string(),
  provider: Provider,
  outcome: z.enum(['reused', 'resumed', 'restored', 'restored-native', 'created-from-base', 'created-empty']),
  source: z.string().nullable(),
});

export const PersistResultSchema = z.object({
  workspaceId: z.string(),
  revision: z.string().nullable(),
  generation: z.number().int(),
  files: z.number().int(),
  bytes: z.number().int(),
  changedFiles: z.number().int(),
  deletedFiles: z.number().int(),
  unchanged: z.boolean(),
  durationMs: z.number(),
  coveredSeq: z.number().int(),
  refusedEntries: z.number().int().optional(),
  refusedPaths: z.array(z.string()).optional(),
  skippedEntries: z.number().int().optional(),
  storedBytes: z.number().int().optional(),
  newObjects: z.number().int().optional(),
  newTrees: z.number().int().optional(),
  offThreadObjects: z.number().int().optional(),
  reusedDirectories: z.number().int().optional(),
  unstattedEntries: z.number().int().optional(),
  unlistedDirectories: z.number().int().optional(),
  writeWaitMs: z.number().int().optional(),
  walks: z.number().int().optional(),
  pointInTime: z.boolean().optional(),
  transferredBytes: z.number().int().optional(),
  transferredFiles: z.number().int().optional(),
  seededFiles: z.number().int().optional(),
});

export const RollbackResultSchema = z.object({
  workspaceId: z.string(),
  revision: z.string(),
  restoredFrom: z.string(),
  generation: z.number().int(),
  files: z.number().int(),
  durationMs: z.number(),
});

/** `202` of every waitable route (and the `200` without a typed result): the job's queue and id. */
export const EnqueuedSchema = z.object({
  queue: z.string().describe('BullMQ queue name (host-bound queues are `<queue>@<host>`)'),
  jobId: z.string(),
  seq: z.number().int().optional().describe('Persist: the request sequence number a result covers when its coveredSeq >= seq'),
  manifestHash: z.string().optional().describe('Bake: the manifest hash (one job per hash)'),
});

/** The waited answer of a route whose job returns `result`. */
export const waited = <T extends z.ZodType>(result: T) => EnqueuedSchema.extend({ result: result.optional() });

/** A job result the API does not type further (bake, gc, backfill: see their CLI docs). */
export const OpaqueResult = z.record(z.string(), z.unknown());

export const AddressSchema = z.object({
  workspaceId: z.string(),
  handle: z.string(),
  generation: z.number().int(),
  hostId: z.string(),
  provider: Provider,
  publishedAt: Timestamp,
});

export const RuntimeSchema = z.object({
  workspaceId: z.string(),
  state: z.enum(['pending', 'provisioning', 'ready', 'stopped', 'error']),
  provider: z.string(),
  generation: z.number().int(),
  handle: z.string().nullable(),
  handleKind: z.string().nullable(),
  hostId: z.string().nullable(),
  currentSessionId: z.string().nullable(),
  currentSnapshotId: z.string().nullable(),
  runtime: z.string().nullable(),
  lastUsedAt: Timestamp.nullable(),
  provisionLockToken: z.string().nullable(),
  templateVersion: z.string().nullable(),
  baseSnapshotId: z.string().nullable(),
  baseSnapshotVersion: z.string().nullable(),
  outcome: z.string().nullable(),
  source: z.string().nullable(),
  error: z.string().nullable(),
  expiresAt: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WorkspaceViewSchema = z.object({
  workspaceId: z.string(),
  generation: z.number().int(),
  address: AddressSchema.nullable(),
  runtime: RuntimeSchema.nullable(),
  currentRevision: z.string().nullable(),
  revisions: z.number().int(),
  persistLagMs: z.number().nullable(),
  activity: z.object({ openTurns: z.array(z.string()), operations: z.number().int() }),
});

export const HistoryRowSchema = z.object({
  revision: z.string(),
  checkpointId: z.string().nullable(),
  kind: z.enum(['portable_workspace', 'provider_native']),
  generation: z.number().int(),
  reason: z.string(),
  turnId: z.string().nullable(),
  files: z.number().int(),
  bytes: z.number().int(),
  attached: z.boolean(),
  current: z.boolean(),
  createdAt: Timestamp,
});

export const RevisionsSchema = z.object({ workspaceId: z.string(), revisions: z.array(HistoryRowSchema) });

export const ExecResultSchema = z.object({
  workspaceId: z.string(),
  handle: z.string(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
  durationMs: z.number(),
});

export const CheckpointsResultSchema = z.union([
  z.object({ workspaceId: z.string(), action: z.literal('start'), schedulerId: z.string(), queue: z.string() }),
  z.object({ workspaceId: z.string(), action: z.literal('stop'), removed: z.boolean() }),
]);

export const CheckpointViewSchema = z.object({
  checkpointId: z.string(),
  revision: z.string(),
  kind: z.string(),
  generation: z.number().int(),
  reason: z.string(),
  turnId: z.string().nullable(),
  attachedAt: Timestamp.nullable(),
});

export const RejectResultSchema = z.object({ workspaceId: z.string(), checkpointId: z.string(), rejected: z.boolean(), current: CheckpointViewSchema.nullable() });

export const TurnResultSchema = z.object({
  workspaceId: z.string(),
  turnId: z.string(),
  open: z.boolean(),
  expiresAt: Timestamp.nullable(),
  wasOpen: z.boolean().optional(),
});
