/**
 * What a format 2 persist does before and after it builds its root, whether it walked a host
 * tree (persist-to-store.ts) or built from a listing (persist-listed.ts): its basis (the current
 * revision as trees, converted once from a format 1 revision), declared and fenced; the
 * checkpoint's question whether its exact tree may be committed as a reconcile; the result of a
 * persist with nothing to commit; and the commit itself (shrink guard, revision record,
 * `commitRecord`).
 */
import { commitRecord, type CommitRecordOptions } from '../archive/commit-record.js';
import { countRemoved } from '../archive/revision-reader.js';
import type { RevisionRecord } from '../archive/revision-record.js';
import { StoreBuilder, type StoreBasis } from '../archive/store-builder.js';
import { clockLine } from '../archive/change-stamp.js';
import { ShrinkGuardError } from '../errors/shrink-guard-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import type { PersistResult } from '../queues/persist.js';
import type { Checkpoint } from '../state/checkpoint-store.js';
import type { StoreWriter } from '../state/store-writers.js';
import { DirHandle } from '../tree/dir-handle.js';
import { UNLIMITED_TREE, vanishedTolerance } from '../tree/tree-limits.js';
import type { checkSourceIntact, PersistContext, PersistDeps, PersistRequest } from './persist-workspace.js';
import { shrinkGuardRefusal } from './shrink-guard.js';

export interface Basis extends StoreBasis {
  readonly files: number;
  readonly entries: number;
  readonly generation: number;
  /** The basis is the current revision's own format 2 record (not a conversion). */
  readonly native: boolean;
}

// The current revision as a format 2 basis (a format 1 revision is walked into trees once).
export async function basisOf(deps: PersistDeps, workspaceId: string, revision: string | null, signal: AbortSignal): Promise<Basis | null> {
  if (!revision) return null;
  const record = await deps.archive.readRecord(workspaceId, revision);
  if (record) return { root: record.root, changedAfterNs: clockLine(BigInt(record.scanStartedAt)), files: record.files, entries: record.entries, generation: record.generation, native: true };
  const manifest = await deps.archive.readManifest(workspaceId, revision);
  if (!manifest) return null;
  const source = await DirHandle.open(deps.archive.paths(workspaceId).revision(revision));
  try {
    const builder = new StoreBuilder({ store: deps.archive.objects, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal });
    const root = await builder.build(source);
    // Times of a converted revision are the archive copies', not the live files': every file is hashed again.
    return { root, changedAfterNs: clockLine(0n), files: manifest.files, entries: manifest.entries.length, generation: manifest.generation, native: false };
  } finally {
    await source.close();
  }
}

/**
 * Why a checkpoint's exact walk may not be committed as a reconcile (null: it may): more entries
 * vanished than normal work explains, or it removes more files than the shrink guard allows.
 * A replaced root is not a reason: that walk is refused whatever the mode.
 */
export async function exactRefusal(deps: PersistDeps, basis: Basis | null, built: { readonly root: string; readonly scan: Parameters<typeof checkSourceIntact>[1] }): Promise<string | null> {
  const { scan } = built;
  if (scan.rootChanged) return null;
  if (scan.vanished > vanishedTolerance(scan.walked)) return `${scan.vanished} of ${scan.walked} entries vanished during the walk`;
  if (!basis || built.root === basis.root) return null;
  const removed = await countRemoved(deps.archive.objects, basis.root, built.root);
  return shrinkGuardRefusal({ previousFiles: basis.files, removedFiles: removed.files, pct: deps.shrinkGuardPct, force: false });
}


/** The run a format 2 persist belongs to. */
export interface StoreRunBase {
  readonly head: Checkpoint | null;
  readonly currentRevision: string | null;
  readonly revision: string;
  readonly started: number;
}

/**
 * The basis of a persist registered as a store writer: declared (unchanged files and directories
 * are referenced from it, not refreshed, so it stays a root while the persist runs) and fenced (a
 * basis of a newer generation refuses the persist).
 */
export async function declaredBasis(writer: StoreWriter, deps: PersistDeps, request: PersistRequest, currentRevision: string | null, signal: AbortSignal): Promise<Basis | null> {
  const basis = await basisOf(deps, request.workspaceId, currentRevision, signal);
  if (basis) await writer.declare(basis.root);
  if (basis && basis.generation > request.generation) {
    await deps.addresses.countFenceRejection();
    throw new StaleGenerationError(request.workspaceId, request.generation, basis.generation);
  }
  return basis;
}

/**
 * The seed of a first persist (persist/base-seed.ts), declared like a basis. It is asked for again
 * once declared: a base retired before that may have lost its trees to the objects GC, and one
 * still recorded then is kept by it (gc/mark-reachable.ts).
 */
export async function declaredSeed(writer: StoreWriter, deps: Pick<PersistDeps, 'seedOf'>, workspaceId: string): Promise<StoreBasis | null> {
  const seed = deps.seedOf ? await deps.seedOf(workspaceId) : null;
  if (!seed) return null;
  await writer.declare(seed.root);
  const again = await deps.seedOf!(workspaceId);
  return again?.root === seed.root ? seed : null;
}

/** The result of a persist that commits nothing. */
export function unchangedStoreResult(request: PersistRequest, run: StoreRunBase, basis: Basis | null): PersistResult {
  return {
    workspaceId: request.workspaceId,
    revision: run.currentRevision,
    generation: request.generation,
    files: basis?.files ?? 0,
    bytes: 0,
    changedFiles: 0,
    deletedFiles: 0,
    unchanged: true,
    durationMs: Date.now() - run.started,
    coveredSeq: request.coveredSeq,
  };
}

/** A built root and what it holds. */
export interface BuiltRoot {
  readonly root: string;
  readonly files: number;
  readonly bytes: number;
  readonly entries: number;
  /** Reconcile (the tree exactly) or upload-only (what the tree lacks kept). */
  readonly reconcile: boolean;
  /** When the build began reading the tree (ns). */
  readonly scanStartedAt: bigint;
}

/**
 * Commits `built` as the run's revision: the shrink guard for a reconcile request, the revision
 * record, `commitRecord` (record durable, Redis record and fenced attach, `current`). Returns the
 * entries the revision removed from the basis.
 */
export async function commitBuiltRoot(
  deps: PersistDeps,
  request: PersistRequest,
  ctx: PersistContext,
  run: StoreRunBase,
  basis: Basis | null,
  built: BuiltRoot,
  beforeRecord?: CommitRecordOptions['beforeRecord'],
): Promise<{ readonly removedEntries: number }> {
  const { workspaceId } = request;
  const removed = await countRemoved(deps.archive.objects, basis?.root ?? null, built.root);
  const refusal = request.delete ? shrinkGuardRefusal({ previousFiles: basis?.files ?? 0, removedFiles: removed.files, pct: deps.shrinkGuardPct, force: request.force }) : null;
  if (refusal) throw new ShrinkGuardError(`workspace ${workspaceId}: ${refusal}`, { context: { workspaceId, revision: run.currentRevision } });
  const record: RevisionRecord = {
    format: 2,
    workspaceId,
    revision: run.revision,
    generation: request.generation,
    reason: request.reason,
    turnId: request.turnId,
    parent: run.currentRevision,
    mode: built.reconcile ? 'reconcile' : 'upload-only',
    createdAt: new Date().toISOString(),
    scanStartedAt: built.scanStartedAt.toString(),
    root: built.root,
    files: built.files,
    bytes: built.bytes,
    entries: built.entries,
  };
  await commitRecord(deps, record, {
    head: run.head,
    sourceTurnId: request.turnId,
    signal: ctx.signal,
    ...(beforeRecord ? { beforeRecord } : {}),
    onStep: (step) => ctx.progress({ step, percent: step === 'commit' ? 70 : 85 }),
  });
  return { removedEntries: removed.entries };
}
