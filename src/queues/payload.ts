/**
 * Shared schema pieces and the one function that turns a zod failure into a
 * `PayloadInvalidError` naming each field and its value.
 */
import { z } from 'zod';
import { PayloadInvalidError, type FieldIssue } from '../errors/payload-invalid-error.js';

/** Workspace ids: 1-128 letters, digits, `_` or `-` (safe as a path segment and a key part). */
export const WORKSPACE_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export const WorkspaceId = z
  .string({ error: 'must be a string' })
  .regex(WORKSPACE_ID_PATTERN, { error: 'must match ^[A-Za-z0-9_-]{1,128}$' });
export type WorkspaceId = z.infer<typeof WorkspaceId>;

/**
 * Snapshot ids (a provider-native snapshot or a local base directory under
 * FLEET_SNAPSHOT_ROOT): 1-200 letters, digits, `_`, `.` or `-`, starting with a letter or digit,
 * so an id is one path segment that can never be `.` or `..`. Covers every id the fleet makes:
 * local `snap-<ws>-g<gen>-<hex>`, bake's `failed-<hash>-<hex>`, Vercel's `snap_…`, and
 * operator-named base directories.
 */
export const SNAPSHOT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;

export const SnapshotId = z
  .string({ error: 'must be a string' })
  .regex(SNAPSHOT_ID_PATTERN, { error: 'must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$ (never "." or "..")' });

/** Generations are positive integers, strictly increasing per workspace. */
export const Generation = z
  .number({ error: 'must be a number' })
  .int({ error: 'must be a whole number' })
  .min(1, { error: 'must be >= 1' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'is too large' });

/** Free-form short identifiers (turn ids, lanes). */
export const ShortText = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'must not be empty' })
  .max(128, { error: 'must be at most 128 characters' })
  .regex(/^[\x21-\x7e]+$/, { error: 'must be printable ASCII without spaces' });

// Reads the value at a zod issue path from the original input, for the error message.
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = input;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** zod issues → field issues with dotted paths and the offending values. */
export function toFieldIssues(error: z.ZodError, input: unknown): FieldIssue[] {
  return error.issues.map((issue) => {
    const missingKey = issue.code === 'unrecognized_keys' ? (issue.keys as string[]) : null;
    const pathParts = [...issue.path, ...(missingKey ? [missingKey.join(',')] : [])];
    const field = pathParts.map(String).join('.');
    const value = missingKey ? undefined : valueAt(input, issue.path);
    return { field, message: issue.message, ...(value === undefined ? {} : { value }) };
  });
}

/** Parses `input` with `schema` or throws `PayloadInvalidError` for `subject` (e.g. "persist payload"). */
export function parsePayload<S extends z.ZodType>(subject: string, schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new PayloadInvalidError(subject, toFieldIssues(result.error, input));
  return result.data;
}
