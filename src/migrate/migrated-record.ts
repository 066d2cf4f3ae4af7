/**
 * The format 2 record of a migrated revision: same id, and the identity its manifest recorded
 * (generation, reason, turn, parent, mode, created-at), so history reads as one across the two
 * formats and every checkpoint record in Redis that names the revision stays valid. Fields an old
 * manifest lacks get the values a reader can still rely on: `migrate` as reason and mode, the
 * time the revision id carries as created-at. `scanStartedAt` is the created-at (after the
 * format 1 walk, so the next persist hashes again whatever changed in the second before it: more
 * than format 1's own quick check did, never less).
 */
import { REVISION_ID_PATTERN } from '../archive/archive-paths.js';
import type { RevisionManifest } from '../archive/manifest.js';
import { REVISION_MODES, RevisionRecord, RevisionRecordError } from '../archive/revision-record.js';
import type { Converted } from './convert-format1.js';

// `r20261130T101530123Z-…` → 2026-11-30T10:15:30.123Z.
function timeOfId(revision: string): string {
  const m = /^r(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z/.exec(revision)!;
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`;
}

/** The record, validated as every reader will validate it (a record that does not parse would make the revision unreadable). */
export function migratedRecord(manifest: RevisionManifest, converted: Converted): RevisionRecord {
  const loose = manifest as Partial<RevisionManifest>;
  const createdAt = typeof loose.createdAt === 'string' && Number.isFinite(Date.parse(loose.createdAt)) ? loose.createdAt : timeOfId(manifest.revision);
  const draft = {
    format: 2,
    workspaceId: manifest.workspaceId,
    revision: manifest.revision,
    generation: manifest.generation,
    reason: typeof loose.reason === 'string' ? loose.reason : 'migrate',
    turnId: typeof loose.turnId === 'string' ? loose.turnId : null,
    parent: typeof loose.parent === 'string' && REVISION_ID_PATTERN.test(loose.parent) ? loose.parent : null,
    mode: (REVISION_MODES as readonly string[]).includes(loose.mode ?? '') ? loose.mode : 'migrate',
    createdAt,
    scanStartedAt: (BigInt(Date.parse(createdAt)) * 1_000_000n).toString(),
    root: converted.root,
    files: converted.files,
    bytes: converted.bytes,
    entries: converted.entries,
  };
  const parsed = RevisionRecord.safeParse(draft);
  if (!parsed.success) throw new RevisionRecordError(`${manifest.workspaceId}/${manifest.revision}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}
