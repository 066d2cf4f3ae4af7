/**
 * `hostops@{hostId}` (internal): provider operations on a local sandbox that must run on the host
 * holding its directory (create, restore, marker, stop, destroy, exec...), requested by a
 * provisioner or CLI on another host. Served by every process that serves the host's persist
 * queue. Arguments are JSON (buffers as base64, no AbortSignal: the job has its own deadline).
 *
 * The queue is internal but validated like a public one (DESIGN.md "Threat model"): one strict
 * schema per operation (hostops-args.ts), and `hostOpPayloadFor` adds what only the serving host
 * knows (the handle is this host's; an importTree source is a revision of the handle's own
 * workspace under this host's archive root). A payload that fails is a permanent
 * `PayloadInvalid` and nothing is touched.
 */
import { z } from 'zod';
import { recordAt, revisionAt } from '../archive/archive-paths.js';
import type { Config } from '../config.js';
import { parseLocalHandle } from '../providers/local/live-paths.js';
import type { QueueDefinition } from './index.js';
import {
  CreateArgs,
  DeleteSnapshotArgs,
  ExecArgs,
  ImportTreeArgs,
  JobDeadline,
  LocalHandle,
  MarkReadyArgs,
  NoArgs,
  ReadFileArgs,
  SnapshotArgs,
  WriteFilesArgs,
} from './hostops-args.js';

export const HOSTOPS = 'hostops';

export const HOST_OPS = ['create', 'get', 'resume', 'exec', 'writeFiles', 'readFile', 'importTree', 'markReady', 'readReady', 'clearReady', 'snapshot', 'deleteSnapshot', 'stop', 'destroy'] as const;
export type HostOp = (typeof HOST_OPS)[number];

// An operation on an existing incarnation: `handle` is required. `deadlineMs` is the caller's
// deadline for the job (an exec's timeout plus slack), so a long command is not cut at the
// provision deadline on another host (issue 19.10).
const onHandle = <O extends HostOp, A extends z.ZodType>(op: O, args: A) => z.object({ op: z.literal(op), handle: LocalHandle, args, deadlineMs: JobDeadline.optional() }).strict();
// An operation without an incarnation (create, deleteSnapshot): no `handle`.
const onHost = <O extends HostOp, A extends z.ZodType>(op: O, args: A) => z.object({ op: z.literal(op), args, deadlineMs: JobDeadline.optional() }).strict();

/** The shape rules of every operation (what any host can check). */
export const HostOpPayload = z.discriminatedUnion(
  'op',
  [
    onHost('create', CreateArgs),
    onHandle('get', NoArgs),
    onHandle('resume', NoArgs),
    onHandle('exec', ExecArgs),
    onHandle('writeFiles', WriteFilesArgs),
    onHandle('readFile', ReadFileArgs),
    onHandle('importTree', ImportTreeArgs),
    onHandle('markReady', MarkReadyArgs),
    onHandle('readReady', NoArgs),
    onHandle('clearReady', NoArgs),
    onHandle('snapshot', SnapshotArgs),
    onHost('deleteSnapshot', DeleteSnapshotArgs),
    onHandle('stop', NoArgs),
    onHandle('destroy', NoArgs),
  ],
  { error: `must be one of ${HOST_OPS.join(', ')}` },
);
export type HostOpPayload = z.infer<typeof HostOpPayload>;
// `T` with every array and property readonly (callers hand over readonly requests).
type Immutable<T> = T extends readonly (infer U)[] ? readonly Immutable<U>[] : T extends object ? { readonly [K in keyof T]: Immutable<T[K]> } : T;
/** What a caller sends (`args` of argument-less operations may be omitted). */
export type HostOpRequest = Immutable<z.input<typeof HostOpPayload>>;

/** What the serving host knows about itself. */
export interface HostOpScope {
  readonly hostId: string;
  readonly archiveRoot: string;
}

// A revision of the workspace's own archive: a format 1 directory or a format 2 record (restores of both cross hosts).
const isImportSource = (archiveRoot: string, workspaceId: string, from: string) => revisionAt(archiveRoot, workspaceId, from) !== null || recordAt(archiveRoot, workspaceId, from) !== null;

/** The full rules on the host serving the queue: the shape plus this host's handle and archive. */
export function hostOpPayloadFor(scope: HostOpScope) {
  // zod runs this even when a refinement above failed: each check first needs its own field sound.
  return HostOpPayload.superRefine((payload, ctx) => {
    const parsed = 'handle' in payload && typeof payload.handle === 'string' ? parseLocalHandle(payload.handle) : null;
    if (parsed === null) return;
    if (parsed.hostId !== scope.hostId) {
      ctx.addIssue({ code: 'custom', path: ['handle'], message: `must be a handle of this host (${scope.hostId})` });
    } else if (payload.op === 'importTree' && ImportTreeArgs.safeParse(payload.args).success && !isImportSource(scope.archiveRoot, parsed.workspaceId, payload.args.from)) {
      ctx.addIssue({ code: 'custom', path: ['args', 'from'], message: `must be a revision directory or record of workspace ${parsed.workspaceId} under ${scope.archiveRoot}` });
    }
  });
}

export const HOSTOPS_QUEUE: QueueDefinition = Object.freeze({
  name: HOSTOPS,
  schema: HostOpPayload,
  hostBound: true,
  deadlineMs: (c: Config) => c.deadlines.provisionMs,
  // The caller's deadline travels with the job; without one, the provision deadline.
  jobDeadlineMs: (payload: unknown, c: Config) => (payload as { deadlineMs?: number }).deadlineMs ?? c.deadlines.provisionMs,
  concurrency: 16,
});

/** One try, short retention: the caller waits for the result and decides itself. */
export const hostOpJobOptions = { attempts: 1, removeOnComplete: { age: 300, count: 1_000 }, removeOnFail: { age: 3_600, count: 1_000 } };
