/**
 * Backfill of one workspace: copy what the archive lacks from a legacy store into a new
 * revision, then mark the workspace migrated (DESIGN.md queue `backfill`).
 *
 * It runs under the workspace's `provision:{ws}` single-flight lock: while it runs no
 * incarnation is created or restored, so none can come up from a revision this backfill is
 * about to supersede (its next reconcile would delete the backfilled files). The generation
 * fence and the expected head at attach keep it correct if the lock is lost anyway.
 *
 * Idempotent: a migrated workspace is skipped; a re-run after a crash finds the files already
 * archived, copies nothing, records nothing and only marks the workspace migrated.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import type { Logger } from '../logger.js';
import type { SingleFlight } from '../locks/single-flight.js';
import { resolveHead } from '../persist/persist-workspace.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { MigrationStore } from '../state/migration-store.js';
import type { StoreWriters } from '../state/store-writers.js';
import type { Progress } from '../jobs/processor-context.js';
import { buildBackfillRevision } from './build-backfill-revision.js';
import type { BackfillSource, LegacySource, LegacyWorkspace, SkippedEntry } from './legacy-source.js';
import { classifyLive, findLive, targetFor, type LiveTargetDeps } from './live-target.js';
import { planBackfill, type PathConflict } from './plan-backfill.js';
import { anySignal } from '../lib/any-signal.js';

export interface BackfillDeps extends LiveTargetDeps {
  readonly archive: ArchiveStore;
  readonly checkpoints: CheckpointStore;
  readonly migrations: MigrationStore;
  readonly singleFlight: SingleFlight;
  readonly systemPath: string;
  readonly archiveFormat: 1 | 2;
  readonly storeWriters: Pick<StoreWriters, 'begin'>;
  legacySource(source: BackfillSource): LegacySource;
}

export interface BackfillRequest {
  readonly workspaceId: string;
  readonly source: BackfillSource;
}

export interface BackfillContext {
  readonly signal: AbortSignal;
  readonly logger: Logger;
  progress?(update: Progress): Promise<void>;
}

export interface BackfillResult {
  readonly workspaceId: string;
  readonly source: BackfillSource;
  /**
   * `absent`: the legacy store holds nothing to copy and the archive has no revision (not
   * marked: a migrated workspace without any revision could not be provisioned). `partial`: some files could not
   * be placed yet (see `pending`); the rest is archived, and the workspace is not marked
   * migrated, so reads keep falling back to the legacy store and a later run finishes it.
   */
  readonly status: 'migrated' | 'partial' | 'already-migrated' | 'absent';
  /** The revision holding the legacy files (null when none was needed). */
  readonly revision: string | null;
  readonly generation: number | null;
  readonly copiedFiles: number;
  readonly copiedBytes: number;
  /** Legacy files whose path the archive already had (its version stays). */
  readonly archivedFiles: number;
  /** Copied files also written into the live tree. */
  readonly liveFiles: number;
  readonly skipped: readonly SkippedEntry[];
  readonly conflicts: readonly PathConflict[];
  /** Legacy files left for a later run: not UTF-8, so they cannot be written into the live tree. */
  readonly pending: readonly string[];
  readonly durationMs: number;
}

/** Reports list at most this many skipped entries and conflicts (counts are complete). */
const REPORT_LIMIT = 100;

// A result for a run that did no work.
function idle(request: BackfillRequest, status: 'already-migrated' | 'absent', started: number): BackfillResult {
  return { ...request, status, revision: null, generation: null, copiedFiles: 0, copiedBytes: 0, archivedFiles: 0, liveFiles: 0, skipped: [], conflicts: [], pending: [], durationMs: Date.now() - started };
}

// Plans, commits (when something is missing) and marks one opened legacy workspace migrated.
async function migrate(deps: BackfillDeps, request: BackfillRequest, legacy: LegacyWorkspace, ctx: BackfillContext, signal: AbortSignal, started: number): Promise<BackfillResult> {
  const { workspaceId } = request;
  const listing = await legacy.list(signal);
  const live = await findLive(deps, workspaceId, signal);
  const { head, revision: currentRevision } = await resolveHead(deps, workspaceId, ctx.logger);
  const current = currentRevision ? await deps.archive.readManifest(workspaceId, currentRevision) : null;
  const plan = planBackfill(current?.entries ?? [], listing.files);
  let copy = plan.copy;
  let writeLive: typeof copy = [];
  let pending: typeof copy = [];
  const conflicts = [...plan.conflicts];
  if (live && copy.length > 0) {
    const tree = await live.provider.openTree(live.address.handle, signal);
    try {
      const live = await classifyLive(tree.path, copy);
      // Paths the live tree already has stay as they are there; the archive gets the legacy
      // version until the next persist records the live one.
      copy = [...live.absent, ...live.present].sort((a, b) => Buffer.compare(a.rel, b.rel));
      writeLive = live.absent;
      pending = live.unwritable;
      conflicts.push(...live.blocked);
    } finally {
      await tree.release();
    }
  }

  if (copy.length === 0 && currentRevision === null) return { ...idle(request, 'absent', started), skipped: listing.skipped.slice(0, REPORT_LIMIT), conflicts: conflicts.slice(0, REPORT_LIMIT) };
  const target = await targetFor(deps, workspaceId, live);
  const committed =
    copy.length > 0
      ? await buildBackfillRevision(deps, { workspaceId, legacy, target, head, currentRevision, current, copy, writeLive, signal, ...(ctx.progress ? { progress: ctx.progress } : {}) })
      : null;
  const copiedBytes = copy.reduce((sum, f) => sum + f.size, 0);
  const revision = committed?.revision ?? currentRevision;
  const marked = pending.length === 0 && await deps.migrations.mark(workspaceId, {
    at: Date.now(),
    files: copy.length,
    bytes: copiedBytes,
    source: request.source,
    revision,
    archived: plan.archived.length,
    skipped: listing.skipped.length,
    conflicts: conflicts.length,
  });
  if (listing.skipped.length > 0 || conflicts.length > 0) {
    ctx.logger.warn({ workspaceId, skipped: listing.skipped.slice(0, 20), conflicts: conflicts.slice(0, 20) }, 'backfill left legacy entries behind');
  }
  if (pending.length > 0) ctx.logger.warn({ workspaceId, pending: pending.slice(0, 20).map((f) => f.path) }, 'backfill left files the live tree cannot take; not marked migrated');
  ctx.logger.info({ workspaceId, origin: legacy.origin, revision, copied: copy.length, live: writeLive.length, archived: plan.archived.length, marked }, 'workspace backfilled');
  return {
    ...request,
    status: pending.length === 0 ? 'migrated' : 'partial',
    revision,
    generation: target.generation,
    copiedFiles: copy.length,
    copiedBytes,
    archivedFiles: plan.archived.length,
    liveFiles: writeLive.length,
    skipped: listing.skipped.slice(0, REPORT_LIMIT),
    conflicts: conflicts.slice(0, REPORT_LIMIT),
    pending: pending.slice(0, REPORT_LIMIT).map((f) => f.path),
    durationMs: Date.now() - started,
  };
}

export async function backfillWorkspace(deps: BackfillDeps, request: BackfillRequest, ctx: BackfillContext): Promise<BackfillResult> {
  const started = Date.now();
  if (await deps.migrations.isMigrated(request.workspaceId)) return idle(request, 'already-migrated', started);
  return deps.singleFlight.using(`provision:${request.workspaceId}`, async (lock) => {
    const signal = anySignal([ctx.signal, lock.signal]);
    if (await deps.migrations.isMigrated(request.workspaceId)) return idle(request, 'already-migrated', started);
    const legacy = await deps.legacySource(request.source).openWorkspace(request.workspaceId, signal);
    if (!legacy) return idle(request, 'absent', started);
    try {
      return await migrate(deps, request, legacy, ctx, signal, started);
    } finally {
      // A scratch sandbox that could not be destroyed is left to orphan GC; the run stands.
      await legacy.close().catch((error: unknown) => ctx.logger.warn({ err: error, workspaceId: request.workspaceId, origin: legacy.origin }, 'closing the legacy workspace failed'));
    }
  });
}
