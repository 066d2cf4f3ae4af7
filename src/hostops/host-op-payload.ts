/**
 * The `hostops` request: one member per operation of the local provider that must run on the
 * host holding the sandbox's directory, discriminated on `op`, each with its exact argument
 * schema (host-op-args.ts) and its result schema (host-op-results.ts). Caller and serving host
 * share it: the caller validates before anything is enqueued, the serving host again with its
 * own rules (host-op-rules.ts). Arguments are JSON (buffers as base64, no AbortSignal: the job
 * has its own deadline).
 *
 * Wire shape (unchanged since the first hostops queue, so a job enqueued by an older caller is
 * still served): `{ op, handle?, args, deadlineMs? }`, `handle` on operations on an incarnation.
 * `list` and `snapshotStatus` came later: a host older than them refuses them as PayloadInvalid.
 */
import { z } from 'zod';
import {
  CreateArgs,
  DeleteSnapshotArgs,
  HostExecArgs,
  ImportTreeArgs,
  JobDeadline,
  LocalHandle,
  MarkReadyArgs,
  NoArgs,
  ReadFileArgs,
  SnapshotArgs,
  SnapshotStatusArgs,
  WriteFilesArgs,
} from './host-op-args.js';
import { PROVIDER_METHODS } from '../providers/sandbox-provider.js';

/** Every provider method but `openTree` (a persist runs on the host that owns the tree). */
export type HostOp = Exclude<(typeof PROVIDER_METHODS)[number], 'openTree'>;
export const HOST_OPS: readonly HostOp[] = PROVIDER_METHODS.filter((method): method is HostOp => method !== 'openTree');

// An operation on an existing incarnation: `handle` is required. `deadlineMs` is the caller's
// deadline for the job (an exec's timeout plus slack), so a long command is not cut at the
// provision deadline on another host (issue 19.10).
const onHandle = <O extends HostOp, A extends z.ZodType>(op: O, args: A) => z.object({ op: z.literal(op), handle: LocalHandle, args, deadlineMs: JobDeadline.optional() }).strict();
// An operation without an incarnation (create, list, snapshots by id): no `handle`.
const onHost = <O extends HostOp, A extends z.ZodType>(op: O, args: A) => z.object({ op: z.literal(op), args, deadlineMs: JobDeadline.optional() }).strict();

/** The shape rules of every operation (what any host can check). */
export const HostOpPayload = z.discriminatedUnion(
  'op',
  [
    onHost('create', CreateArgs),
    onHandle('get', NoArgs),
    onHandle('resume', NoArgs),
    onHost('list', NoArgs),
    onHandle('exec', HostExecArgs),
    onHandle('writeFiles', WriteFilesArgs),
    onHandle('readFile', ReadFileArgs),
    onHandle('importTree', ImportTreeArgs),
    onHandle('markReady', MarkReadyArgs),
    onHandle('readReady', NoArgs),
    onHandle('clearReady', NoArgs),
    onHandle('snapshot', SnapshotArgs),
    onHost('snapshotStatus', SnapshotStatusArgs),
    onHost('deleteSnapshot', DeleteSnapshotArgs),
    onHandle('stop', NoArgs),
    onHandle('destroy', NoArgs),
  ],
  { error: `must be one of ${HOST_OPS.join(', ')}` },
);
export type HostOpPayload = z.infer<typeof HostOpPayload>;
/** The validated request of operation `O`. */
export type HostOpPayloadOf<O extends HostOp> = Extract<HostOpPayload, { op: O }>;

// `T` with every array and property readonly (callers hand over readonly requests).
type Immutable<T> = T extends readonly (infer U)[] ? readonly Immutable<U>[] : T extends object ? { readonly [K in keyof T]: Immutable<T[K]> } : T;
/** What a caller sends (`args` of argument-less operations may be omitted). */
export type HostOpRequest = Immutable<z.input<typeof HostOpPayload>>;
/** What a caller sends for operation `O`, without `op` and the deadline. */
export type HostOpFields<O extends HostOp> = Omit<Extract<HostOpRequest, { op: O }>, 'op' | 'deadlineMs'>;
