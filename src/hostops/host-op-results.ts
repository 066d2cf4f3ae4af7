/**
 * The result schemas of each `hostops` operation: what the serving host returns (the schema's
 * input, JSON) and what the caller gets once it is validated (its output: a file's content as a
 * Buffer, an operation without a result as `undefined`). The caller parses every result, so an
 * answer it cannot use is refused at the boundary instead of travelling on as a wrong type.
 *
 * Result objects are not `.strict()` (unlike arguments): an unknown key is dropped, so a serving
 * host that reports one more fact does not break a caller that does not know it yet.
 */
import { z } from 'zod';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { Generation, SNAPSHOT_ID_PATTERN, SnapshotId, WorkspaceId, toFieldIssues } from '../queues/payload.js';
import type { HostOp } from './host-op-payload.js';
import { LocalHandle } from './host-op-args.js';

const Text = z.string({ error: 'must be a string' });
const WholeMs = z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(0, { error: 'must be >= 0' });

/**
 * An operation without a result: `null` on the wire (BullMQ stores an older serving host's
 * `undefined` as `null` too); `undefined` is taken as well, from a transport that keeps it.
 */
export const Done = z
  .null({ error: 'must be empty (null)' })
  .optional()
  .transform((): undefined => undefined);

export const CreateResult = z.object({ handle: LocalHandle, hostId: Text });

export const SandboxInfo = z.object({
  handle: LocalHandle,
  workspaceId: WorkspaceId,
  generation: Generation,
  hostId: Text,
  state: z.enum(['running', 'stopped'], { error: 'must be running or stopped' }),
  createdAt: WholeMs.optional(),
});

export const ExecResult = z.object({
  exitCode: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).nullable(),
  signal: Text.nullable(),
  stdout: Text,
  stderr: Text,
  timedOut: z.boolean({ error: 'must be a boolean' }),
  durationMs: z.number({ error: 'must be a number' }).min(0, { error: 'must be >= 0' }),
});

/** A file's content: base64 on the wire, a Buffer for the caller. */
export const FileContent = Text.refine((s) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s), { error: 'must be base64' }).transform((s) => Buffer.from(s, 'base64'));

export const ReadyMarker = z.object({
  generation: Generation,
  source: Text.regex(SNAPSHOT_ID_PATTERN, { error: 'must be a revision id, a snapshot id or "empty"' }),
  readyAt: WholeMs,
});

// `expiresAt` came later: a host older than it answers without one (its snapshots never expire).
export const SnapshotResult = z.object({ snapshotId: SnapshotId, expiresAt: z.number().int().nullable().default(null) });

export const SnapshotStatus = z.enum(['usable', 'expired', 'deleted', 'missing'], { error: 'must be usable, expired, deleted or missing' });

/** The result schema of every operation. */
export const HOST_OP_RESULTS = {
  create: CreateResult,
  get: SandboxInfo.nullable(),
  resume: Done,
  list: z.array(SandboxInfo, { error: 'must be an array of sandboxes' }),
  exec: ExecResult,
  writeFiles: Done,
  readFile: FileContent.nullable(),
  importTree: Done,
  markReady: Done,
  readReady: ReadyMarker.nullable(),
  clearReady: Done,
  snapshot: SnapshotResult,
  snapshotStatus: SnapshotStatus,
  deleteSnapshot: Done,
  stop: Done,
  destroy: Done,
} as const satisfies { readonly [O in HostOp]: z.ZodType };

/** What the serving host returns for `O` (JSON). */
export type HostOpReply<O extends HostOp> = z.input<(typeof HOST_OP_RESULTS)[O]>;
/** What the caller gets for `O` once the reply is validated. */
export type HostOpResult<O extends HostOp> = z.output<(typeof HOST_OP_RESULTS)[O]>;

// The table seen through the two types above, so a lookup by a generic `O` keeps its types.
const RESULT_SCHEMAS: { readonly [O in HostOp]: z.ZodType<HostOpResult<O>, HostOpReply<O>> } = HOST_OP_RESULTS;

/** Validates the serving host's reply to `op`; a reply that fails is a `PayloadInvalidError` naming the field. */
export function parseHostOpResult<O extends HostOp>(op: O, reply: unknown): HostOpResult<O> {
  const result = RESULT_SCHEMAS[op].safeParse(reply);
  if (!result.success) throw new PayloadInvalidError(`hostops ${op} result`, toFieldIssues(result.error, reply));
  return result.data;
}
