/**
 * Builds, verifies and commits one backfill revision with the persist protocol's building
 * blocks (persist-workspace.ts):
 *
 *  1. a temporary revision `revs/.tmp-<id>` starts as the current revision (`buildRevisionTree`
 *     with the revision as its own basis: every archived file is a hard link, nothing is rewritten)
 *  2. the planned legacy files are copied in (exclusive creates: an archived path is never
 *     overwritten)
 *  3. fsync, then scan; every copied file must match the legacy store's size and checksum
 *  4. for a live workspace, the verified copies the live tree lacks are written into it
 *  5. manifest, rename into place; record, attach fenced on the generation and on the head the
 *     run started from, flip `current`
 *
 * A failure before 5 leaves the previous revision current and only litter (removed here, or by
 * GC after a crash).
 */
import { mkdir } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { syncFilesystem } from '../archive/fsync.js';
import { makeManifest, scanTree, type RevisionManifest } from '../archive/manifest.js';
import { newRevisionId } from '../archive/revision-id.js';
import { BackfillDeferredError } from '../errors/backfill-deferred-error.js';
import { ChecksumMismatchError } from '../errors/checksum-mismatch-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import type { Checkpoint, CheckpointStore } from '../state/checkpoint-store.js';
import type { StoreWriters } from '../state/store-writers.js';
import type { Progress } from '../jobs/processor-context.js';
import { buildRevisionTree } from '../archive/build-revision-tree.js';
import { buildBackfillRecord } from './build-backfill-record.js';
import { removeTree } from '../tree/remove-tree.js';
import { UNLIMITED_TREE } from '../tree/tree-limits.js';
import { copyLegacyFiles } from './copy-legacy-files.js';
import type { LegacyFile, LegacyWorkspace } from './legacy-source.js';
import { writeLiveFiles, type Target } from './live-target.js';

export interface RevisionDeps {
  readonly archive: ArchiveStore;
  readonly checkpoints: CheckpointStore;
  readonly systemPath: string;
  /** The format new revisions are written in. */
  readonly archiveFormat: 1 | 2;
  /** Where a format 2 backfill registers while it writes to the object store. */
  readonly storeWriters: Pick<StoreWriters, 'begin'>;
}

export interface RevisionInput {
  readonly workspaceId: string;
  readonly legacy: LegacyWorkspace;
  readonly target: Target;
  /** The attached head and its revision when the run started. */
  readonly head: Checkpoint | null;
  readonly currentRevision: string | null;
  readonly current: RevisionManifest | null;
  /** Files to copy into the revision. */
  readonly copy: readonly LegacyFile[];
  /** Of those, the ones to write into the live tree too. */
  readonly writeLive: readonly LegacyFile[];
  readonly signal: AbortSignal;
  readonly progress?: (update: Progress) => Promise<void>;
}

export interface CommittedRevision {
  readonly revision: string;
  readonly files: number;
  readonly bytes: number;
}

// Throws unless every copied file was scanned with the legacy size and checksum.
async function verifyCopies(input: RevisionInput, entries: ReadonlyMap<string, { t: string; s?: number; h?: string }>): Promise<void> {
  for (const file of input.copy) {
    const entry = entries.get(file.path);
    const expected = await input.legacy.checksum(file, input.signal);
    const actual = entry?.t === 'f' && entry.s === file.size ? entry.h! : `${entry?.t ?? 'missing'}:${entry?.s ?? 0} bytes`;
    if (actual !== expected) throw new ChecksumMismatchError(input.workspaceId, file.path, expected, actual);
  }
}

export async function buildBackfillRevision(deps: RevisionDeps, input: RevisionInput): Promise<CommittedRevision> {
  // Format 2 when the current revision is one (it has no tree on disk to start from), or when the
  // archive writes format 2 and there is no current revision; a format 1 current revision gets a
  // format 1 backfill on top (its next persist converts it), never a record without its files.
  if (input.current?.format === 2 || (deps.archiveFormat === 2 && !input.currentRevision)) return buildBackfillRecord(deps, input);
  const { workspaceId, target, signal, currentRevision } = input;
  const progress = input.progress ?? (async () => undefined);
  const paths = await deps.archive.ensure(workspaceId);
  const revision = newRevisionId(target.generation);
  const tmp = paths.tmp(revision);
  try {
    if (currentRevision) {
      await progress({ step: 'link', percent: 10 });
      await buildRevisionTree({
        source: paths.revision(currentRevision),
        dest: tmp,
        basis: input.current ? { root: paths.revision(currentRevision), manifest: input.current } : null,
        keepMissing: false,
        limits: UNLIMITED_TREE,
        signal,
        systemPath: deps.systemPath,
      });
    } else {
      await mkdir(tmp, { mode: 0o700 });
    }
    await copyLegacyFiles(input.legacy, input.copy, tmp, signal, (done) => {
      if (done % 100 === 0) void progress({ step: 'copy', done, total: input.copy.length, percent: 10 + Math.floor((done / input.copy.length) * 50) });
    });
    await progress({ step: 'verify', percent: 60 });
    await syncFilesystem(tmp, deps.systemPath, signal);
    const scan = await scanTree(tmp, input.current, signal);
    await verifyCopies(input, new Map(scan.entries.map((e) => [e.p, e])));
    if (target.live && input.writeLive.length > 0) {
      await progress({ step: 'live', percent: 75 });
      await writeLiveFiles(target.live.provider, target.live.address.handle, tmp, input.writeLive, signal);
    }

    await progress({ step: 'commit', percent: 85 });
    const manifest = makeManifest(
      { workspaceId, revision, generation: target.generation, reason: 'backfill', turnId: null, parent: currentRevision, mode: 'backfill', createdAt: new Date().toISOString() },
      scan,
    );
    await deps.archive.writeManifest(workspaceId, manifest);
    await deps.archive.commit(workspaceId, revision);
    const checkpoint = await deps.checkpoints.record({
      workspaceId,
      generation: target.generation,
      kind: 'portable_workspace',
      workspaceRevision: revision,
      reason: 'backfill',
      files: manifest.files,
      bytes: manifest.bytes,
    });
    await deps.checkpoints.attach(workspaceId, checkpoint.id, target.generation, { expectedHead: input.head?.id ?? null }).catch((error: unknown) => {
      // A new incarnation started meanwhile: a fresh run picks its generation (and live tree).
      if (error instanceof StaleGenerationError) throw new BackfillDeferredError(`workspace ${workspaceId}: generation moved during the backfill`, { context: { workspaceId }, cause: error });
      throw error;
    });
    await deps.archive.flipCurrent(workspaceId, revision);
    return { revision, files: manifest.files, bytes: manifest.bytes };
  } finally {
    await removeTree(tmp).catch(() => undefined);
  }
}
