/**
 * The argument schemas of each `hostops` operation (see host-op-payload.ts). Every one is `.strict()`;
 * ids follow the fleet's id rules (`.` and `..` are never valid), tree paths are relative
 * without `.`/`..`/empty segments or NUL, and every size is bounded.
 */
import path from 'node:path';
import { z } from 'zod';
import { REVISION_ID_PATTERN } from '../archive/archive-paths.js';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { parseLocalHandle } from '../providers/local/live-paths.js';
import { checkRelativePath } from '../providers/local/safe-path.js';
import { Generation, SNAPSHOT_ID_PATTERN, SnapshotId, WorkspaceId } from '../queues/payload.js';

/** Longest command line accepted (Linux ARG_MAX is 2 MiB including the environment). */
const MAX_CMD_BYTES = 2 * 1024 * 1024;
/** Longest exec deadline: a day. */
export const MAX_EXEC_TIMEOUT_MS = 24 * 60 * 60_000;
/**
 * What a caller adds to an exec's own timeout for the job's deadline: the time to kill the
 * command's process group and hand back its output.
 */
export const EXEC_JOB_SLACK_MS = 30_000;
/** Largest stdin of a command (bytes, UTF-8): larger input belongs in a file of the tree. */
export const MAX_STDIN_BYTES = 1024 * 1024;
/** Largest file content (base64 characters): Redis strings stop at 512 MiB. */
const MAX_BASE64_CHARS = 512 * 1024 * 1024;

/** The deadline the caller gives one hostops job (ms); without it the job gets the provision deadline. */
export const JobDeadline = z
  .number({ error: 'must be a number' })
  .int({ error: 'must be a whole number' })
  .min(1_000, { error: 'must be >= 1000' })
  .max(MAX_EXEC_TIMEOUT_MS + EXEC_JOB_SLACK_MS, { error: `must be <= ${MAX_EXEC_TIMEOUT_MS + EXEC_JOB_SLACK_MS}` });

/** A local handle, `local:<host>:<workspace>:g<generation>` (the host is checked by the processor). */
export const LocalHandle = z
  .string({ error: 'must be a string' })
  .max(512, { error: 'must be at most 512 characters' })
  .refine((h) => parseLocalHandle(h) !== null, { error: 'must be a local handle local:<host>:<workspace>:g<generation>' });

// A path relative to the tree root, by the same rule the provider applies (safe-path.ts).
const TreePath = z.string({ error: 'must be a string' }).superRefine((value, ctx) => {
  try {
    checkRelativePath('path', value);
  } catch (error) {
    if (!(error instanceof PayloadInvalidError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.issues[0]?.message ?? 'must be a relative path' });
  }
});

const NoNul = (max: number, what: string) =>
  z
    .string({ error: 'must be a string' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((s) => !s.includes('\0'), { error: `${what} must not contain NUL` });

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, { error: 'must be an environment variable name ^[A-Za-z_][A-Za-z0-9_]{0,127}$' });
const Env = z
  .record(EnvName, NoNul(32_768, 'a value'), { error: 'must be an object of strings' })
  .refine((env) => Object.keys(env).length <= 256, { error: 'must have at most 256 variables' });

const WholeMs = (max: number) =>
  z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(0, { error: 'must be >= 0' })
    .max(max, { error: `must be <= ${max}` });

export const CreateArgs = z
  .object({
    workspaceId: WorkspaceId,
    generation: Generation,
    source: z.discriminatedUnion(
      'type',
      [
        z.object({ type: z.literal('empty') }).strict(),
        z.object({ type: z.literal('base-snapshot'), snapshotId: SnapshotId }).strict(),
        z.object({ type: z.literal('workspace-snapshot'), snapshotId: SnapshotId }).strict(),
      ],
      { error: 'must be { type: empty } or { type: base-snapshot | workspace-snapshot, snapshotId }' },
    ),
    env: Env.optional(),
  })
  .strict();

export const ExecArgs = z
  .object({
    cmd: z
      .array(NoNul(131_072, 'an argument'), { error: 'must be an array of strings' })
      .min(1, { error: 'must not be empty' })
      .max(4_096, { error: 'must have at most 4096 arguments' })
      .refine((cmd) => cmd[0] !== '', { error: 'must start with a program name' })
      .refine((cmd) => cmd.reduce((n, arg) => n + Buffer.byteLength(arg) + 1, 0) <= MAX_CMD_BYTES, { error: `must total at most ${MAX_CMD_BYTES} bytes` }),
    cwd: TreePath.optional(),
    env: Env.optional(),
    stdin: z
      .string({ error: 'must be a string' })
      .refine((s) => Buffer.byteLength(s) <= MAX_STDIN_BYTES, { error: `must be at most ${MAX_STDIN_BYTES} bytes (put larger input in a file of the tree)` })
      .optional(),
    timeoutMs: WholeMs(MAX_EXEC_TIMEOUT_MS).min(1, { error: 'must be >= 1' }),
  })
  .strict();

/**
 * Exec between hosts: the command's arguments plus, when the caller streams the output, the id
 * of the Redis stream the serving host appends it to as it arrives (state/exec-output-store.ts).
 */
export const HostExecArgs = ExecArgs.extend({ stream: z.uuid({ error: 'must be a UUID' }).optional() }).strict();

export const WriteFilesArgs = z
  .object({
    files: z
      .array(
        z
          .object({
            path: TreePath,
            content: z
              .string({ error: 'must be a base64 string' })
              .max(MAX_BASE64_CHARS, { error: `must be at most ${MAX_BASE64_CHARS} characters` })
              .refine((s) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s), { error: 'must be base64' }),
            mode: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(0, { error: 'must be >= 0' }).max(0o7777, { error: 'must be <= 0o7777' }).optional(),
          })
          .strict(),
        { error: 'must be an array of files' },
      )
      .max(100_000, { error: 'must have at most 100000 files' }),
  })
  .strict();

export const ReadFileArgs = z.object({ path: TreePath }).strict();

/**
 * A revision directory `…/revs/<revision>` given as an absolute, normalised path; the
 * processor also checks that it is the handle's own workspace under this host's archive root.
 */
export const ImportTreeArgs = z
  .object({
    from: NoNul(4_096, 'a path').refine((p) => path.isAbsolute(p) && path.normalize(p) === p && REVISION_ID_PATTERN.test(path.basename(p).replace(/\.rev\.json$/, '')) && path.basename(path.dirname(p)) === 'revs', {
      error: 'must be the absolute path of an archive revision directory or record (…/<workspace>/revs/<revision>[.rev.json])',
    }),
  })
  .strict();

export const MarkReadyArgs = z
  .object({
    marker: z
      .object({
        generation: Generation,
        source: z.string({ error: 'must be a string' }).regex(SNAPSHOT_ID_PATTERN, { error: 'must be a revision id, a snapshot id or "empty"' }),
        readyAt: WholeMs(Number.MAX_SAFE_INTEGER),
      })
      .strict(),
  })
  .strict();

export const SnapshotArgs = z.object({ expirationMs: WholeMs(Number.MAX_SAFE_INTEGER) }).strict();

export const DeleteSnapshotArgs = z.object({ snapshotId: SnapshotId }).strict();

export const SnapshotStatusArgs = z.object({ snapshotId: SnapshotId }).strict();

/** Operations whose only argument is the handle. */
export const NoArgs = z.object({}).strict().default({});
