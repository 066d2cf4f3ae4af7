/**
 * The format 2 commit protocol, written once for every writer of revisions (persist, rollback,
 * backfill, migrate): objects and trees durable (one `syncfs` of the archive) → a last check by
 * the caller → the revision record (fsync, rename) → the checkpoint recorded in Redis and attached,
 * fenced on the generation and on the head the writer started from → `current` flipped. A failure
 * anywhere before the flip leaves the previous revision current and only unreferenced data.
 * A migration (src/migrate) runs the first two steps and flips `current` to the record of the
 * revision it already pointed at.
 */
import type { Checkpoint, CheckpointStore } from '../state/checkpoint-store.js';
import type { ArchiveStore } from './archive-store.js';
import { syncFilesystem } from './fsync.js';
import type { RevisionRecord } from './revision-record.js';

export interface CommitRecordDeps {
  readonly archive: ArchiveStore;
  readonly checkpoints: Pick<CheckpointStore, 'record' | 'attach'>;
  readonly systemPath: string;
}

export interface CommitRecordOptions {
  /** The head the writer started from (the attach refuses if it moved). */
  readonly head: Checkpoint | null;
  readonly sourceTurnId?: string | null;
  readonly signal: AbortSignal;
  /** Runs after the data is durable and before the record is written; throw to abandon. */
  readonly beforeRecord?: () => Promise<void>;
  /** Progress of the two visible steps. */
  readonly onStep?: (step: 'commit' | 'attach') => Promise<void>;
}

/**
 * Steps 1 and 2 alone: the objects and trees durable, then the record. What a migration needs,
 * which gives an existing revision (already recorded and attached under its id) its record.
 */
export async function writeDurableRecord(deps: Pick<CommitRecordDeps, 'archive' | 'systemPath'>, record: RevisionRecord, options: Pick<CommitRecordOptions, 'signal' | 'beforeRecord'>): Promise<void> {
  await syncFilesystem(deps.archive.root, deps.systemPath, options.signal);
  await options.beforeRecord?.();
  await deps.archive.writeRecord(record);
}

/** Commits `record` (its objects and trees already stored); returns the attached checkpoint. */
export async function commitRecord(deps: CommitRecordDeps, record: RevisionRecord, options: CommitRecordOptions): Promise<Checkpoint> {
  await options.onStep?.('commit');
  await writeDurableRecord(deps, record, options);
  await options.onStep?.('attach');
  const checkpoint = await deps.checkpoints.record({
    workspaceId: record.workspaceId,
    generation: record.generation,
    kind: 'portable_workspace',
    workspaceRevision: record.revision,
    sourceTurnId: options.sourceTurnId ?? null,
    reason: record.reason,
    files: record.files,
    bytes: record.bytes,
  });
  await deps.checkpoints.attach(record.workspaceId, checkpoint.id, record.generation, { expectedHead: options.head?.id ?? null });
  await deps.archive.flipCurrent(record.workspaceId, record.revision);
  return checkpoint;
}
