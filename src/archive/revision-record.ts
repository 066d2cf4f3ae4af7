/**
 * Format 2 revision records (docs/archive-format.md): the small file that names a revision's root
 * tree and says what it is. Written last, after its objects and trees are durable; read back as
 * data (validated), since anything on disk may be damaged.
 */
import { z } from 'zod';
import { OBJECT_ID_PATTERN } from './tree-object.js';
import { REVISION_ID_PATTERN } from './archive-paths.js';

export const REVISION_MODES = ['reconcile', 'upload-only', 'restore', 'rollback', 'backfill', 'migrate', 'write'] as const;

export const RevisionRecord = z
  .object({
    format: z.literal(2),
    workspaceId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/),
    revision: z.string().regex(REVISION_ID_PATTERN),
    generation: z.number().int().min(0),
    reason: z.string().max(64),
    turnId: z.string().max(256).nullable(),
    parent: z.string().regex(REVISION_ID_PATTERN).nullable(),
    mode: z.enum(REVISION_MODES),
    createdAt: z.string(),
    /** When the walk of the source began, in ns (the racily-clean rule of the next persist). */
    scanStartedAt: z.string().regex(/^\d{1,25}$/),
    root: z.string().regex(OBJECT_ID_PATTERN),
    files: z.number().int().min(0),
    bytes: z.number().int().min(0),
    entries: z.number().int().min(0),
  })
  .strict();
export type RevisionRecord = z.infer<typeof RevisionRecord>;

/** Thrown when a record file is not a valid format 2 record. */
export class RevisionRecordError extends Error {
  readonly code = 'ERECORD';
}

/** Parses a record's bytes. */
export function parseRevisionRecord(bytes: Buffer | string, label: string): RevisionRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString());
  } catch {
    throw new RevisionRecordError(`${label}: not JSON`);
  }
  const parsed = RevisionRecord.safeParse(raw);
  if (!parsed.success) throw new RevisionRecordError(`${label}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}
