/**
 * The persist protocol (DESIGN.md "Persist protocol"), provider-neutral:
 *
 *  1. fence: the generation equals the address store's (else StaleGeneration, nothing written)
 *  2. gate: the sandbox carries a ready marker of this generation (else NotReady)
 *  3. allocate a never-reused revision id
 *  4. build the tree in `revs/.tmp-<id>` in one walk by directory handles (build-revision-tree.ts):
 *     unchanged files (size, mode, nanosecond mtime) are hard-linked from the current revision,
 *     the rest copied and hashed; upload-only keeps what the tree no longer has; entries over a
 *     tree limit are refused and keep their archived state
 *  5. refuse a torn source (root replaced, too many entries vanished during a reconcile); shrink
 *     guard; an unchanged tree records nothing; fsync, manifest, rename into place
 *  6. record the checkpoint, attach it fenced on generation (and on the head it started from),
 *     then flip `current` by rename. Only then is the request acknowledged.
 *  7. any failure before 6 leaves the previous revision current and only collectable litter.
 */
import type { StoreBasis } from '../archive/store-builder.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import { syncFilesystem } from '../archive/fsync.js';
import { makeManifest, removedPaths, type RevisionManifest } from '../archive/manifest.js';
import { newRevisionId } from '../archive/revision-id.js';
import { EmptySourceError } from '../errors/empty-source-error.js';
import { NotReadyError } from '../errors/not-ready-error.js';
import { ShrinkGuardError } from '../errors/shrink-guard-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import type { Logger } from '../logger.js';
import type { PersistReason, PersistResult } from '../queues/persist.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { Address, AddressStore } from '../state/address-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { Progress } from '../jobs/processor-context.js';
import { errnoOf } from '../errors/classify-storage-error.js';
import { TreeChangedError } from '../errors/tree-changed-error.js';
import { DirHandle } from '../tree/dir-handle.js';
import { removeTree } from '../tree/remove-tree.js';
import { vanishedTolerance, type TreeLimits } from '../tree/tree-limits.js';
import { buildRevisionTree, type BuiltTree } from '../archive/build-revision-tree.js';
import { persistListed } from './persist-listed.js';
import { persistToStore } from './persist-to-store.js';
import type { StoreWriters } from '../state/store-writers.js';
import type { StatCaches } from '../archive/stat-caches.js';
import { shrinkGuardRefusal } from './shrink-guard.js';

export interface PersistRequest {
  readonly workspaceId: string;
  readonly generation: number;
  readonly delete: boolean;
  /**
   * Only checkpoints asked (`delete` false): take the live tree exactly (a reconcile), so a
   * restore gives back a state the tree really had, unless the reconcile would be refused (the
   * shrink guard, or more entries vanished during the walk than normal work explains): then the
   * run keeps what the tree lacks, as an upload-only persist. Format 2 only (format 1 checkpoints
   * stay upload-only).
   */
  readonly exact?: boolean;
  readonly force: boolean;
  readonly reason: PersistReason;
  readonly turnId: string | null;
  readonly coveredSeq: number;
}

export interface PersistDeps {
  readonly addresses: AddressStore;
  readonly checkpoints: CheckpointStore;
  readonly archive: ArchiveStore;
  /** Provider of an address (local or vercel). */
  readonly providerFor: (address: Address) => SandboxProvider;
  readonly shrinkGuardPct: number;
  readonly systemPath: string;
  /** What a persist takes from a live tree. */
  readonly treeLimits: TreeLimits;
  /** The format new revisions are written in (1: hard-linked trees; 2: objects and trees). */
  readonly archiveFormat: 1 | 2;
  /** Where a format 2 persist registers while it writes the object store (the objects GC keeps its work). */
  readonly storeWriters: Pick<StoreWriters, 'begin'>;
  /** Stat caches of live trees (a format 2 persist reads the one of its basis and leaves its own). */
  readonly statCaches: Pick<StatCaches, 'load' | 'save'>;
  /** Take directories unchanged since the last walk of the tree from the basis by id (archive/changed-dirs.ts). @default false */
  readonly changeScan?: boolean;
  /** The archived root of the base a workspace was made from: its first persist's basis (persist/base-seed.ts). */
  readonly seedOf?: (workspaceId: string) => Promise<StoreBasis | null>;
}

export interface PersistContext {
  readonly signal: AbortSignal;
  readonly logger: Logger;
  progress(update: Progress): Promise<void>;
}

/** Fails the fence check: the job's generation is not the workspace's current incarnation. */
async function fence(deps: PersistDeps, request: PersistRequest): Promise<Address> {
  const address = await deps.addresses.get(request.workspaceId);
  if (!address || address.generation !== request.generation) {
    await deps.addresses.countFenceRejection();
    throw new StaleGenerationError(request.workspaceId, request.generation, address?.generation ?? null);
  }
  return address;
}

/** The attached head: the checkpoint store decides; the `current` symlink is repaired to match. */
export async function resolveHead(deps: Pick<PersistDeps, 'checkpoints' | 'archive'>, workspaceId: string, logger: Logger) {
  const head = await deps.checkpoints.current(workspaceId);
  const linked = await deps.archive.current(workspaceId);
  if (head && head.kind === 'portable_workspace' && head.workspaceRevision !== linked) {
    if (await deps.archive.readManifest(workspaceId, head.workspaceRevision)) {
      logger.warn({ head: head.workspaceRevision, linked }, 'repairing current pointer to the attached head');
      await deps.archive.flipCurrent(workspaceId, head.workspaceRevision);
      return { head, revision: head.workspaceRevision };
    }
  }
  // Without a record (Redis lost it), the symlink is the best knowledge of the head.
  return { head, revision: head?.kind === 'portable_workspace' ? head.workspaceRevision : linked };
}

export async function persistWorkspace(deps: PersistDeps, request: PersistRequest, ctx: PersistContext): Promise<PersistResult> {
  const started = Date.now();
  const { workspaceId, generation } = request;
  const address = await fence(deps, request);
  const provider = deps.providerFor(address);
  await ctx.progress({ step: 'gate', percent: 5 });
  const marker = await provider.readReady(address.handle, ctx.signal);
  if (!marker || marker.generation !== generation) throw new NotReadyError(workspaceId, generation, marker?.generation ?? null);

  const paths = await deps.archive.ensure(workspaceId);
  const { head, revision: currentRevision } = await resolveHead(deps, workspaceId, ctx.logger);
  if (deps.archiveFormat === 2 && provider.listTree) {
    // A remote tree without a host copy: listed, its changes fetched into the store (persist-listed.ts).
    const tree = await provider.listTree(address.handle, ctx.signal);
    try {
      return await persistListed(deps, request, ctx, { head, currentRevision, tree, revision: newRevisionId(generation), started });
    } finally {
      await tree.release();
    }
  }
  if (deps.archiveFormat === 2) {
    const tree = await provider.openTree(address.handle, ctx.signal);
    try {
      return await persistToStore(deps, request, ctx, { head, currentRevision, tree, revision: newRevisionId(generation), started });
    } finally {
      await tree.release();
    }
  }
  const current: RevisionManifest | null = currentRevision ? await deps.archive.readManifest(workspaceId, currentRevision) : null;
  if (current && current.generation > generation) {
    await deps.addresses.countFenceRejection();
    throw new StaleGenerationError(workspaceId, generation, current.generation);
  }

  const tree = await provider.openTree(address.handle, ctx.signal);
  const revision = newRevisionId(generation);
  const tmp = paths.tmp(revision);
  try {
    if (await isEmptyTree(tree.path, workspaceId)) {
      if (current && current.entries.length > 0) {
        throw new EmptySourceError(`workspace ${workspaceId}: live tree is empty but revision ${currentRevision} has ${current.files} files; refusing to persist (unmounted or wiped?)`, {
          context: { workspaceId, revision: currentRevision },
        });
      }
      return unchangedResult(request, currentRevision, current, started);
    }

    await ctx.progress({ step: 'link', percent: 10 });
    const scan = await buildRevisionTree({
      source: tree.path,
      dest: tmp,
      basis: current && currentRevision ? { root: paths.revision(currentRevision), manifest: current } : null,
      keepMissing: !request.delete,
      limits: deps.treeLimits,
      systemPath: deps.systemPath,
      signal: ctx.signal,
      onProgress: (done) => {
        const total = current?.entries.length ?? done;
        void ctx.progress({ step: 'link', done, total, percent: 10 + Math.floor(40 * Math.min(1, done / Math.max(1, total))) });
      },
    });
    checkSourceIntact(request, scan);
    reportTree(ctx.logger, workspaceId, scan);

    await ctx.progress({ step: 'scan', percent: 50 });
    const removed = removedPaths(current, scan.entries);
    const refusal = request.delete
      ? shrinkGuardRefusal({ previousFiles: current?.files ?? 0, removedFiles: countRemovedFiles(current, scan.entries), pct: deps.shrinkGuardPct, force: request.force })
      : null;
    if (refusal) throw new ShrinkGuardError(`workspace ${workspaceId}: ${refusal}`, { context: { workspaceId, revision: currentRevision } });

    const manifest = makeManifest(
      {
        workspaceId,
        revision,
        generation,
        reason: request.reason,
        turnId: request.turnId,
        parent: currentRevision,
        mode: request.delete ? 'reconcile' : 'upload-only',
        createdAt: new Date().toISOString(),
      },
      scan,
    );
    if (current && manifest.treeHash === current.treeHash && scan.copiedFiles === 0) {
      return { ...unchangedResult(request, currentRevision, current, started), ...treeReport(scan) };
    }

    await ctx.progress({ step: 'commit', percent: 70 });
    await syncFilesystem(tmp, deps.systemPath, ctx.signal);
    // Last look before the revision becomes visible: a tree wiped since the walk is not committed.
    if (!(await scan.rootIntact())) checkSourceIntact(request, { ...scan, rootChanged: true });
    await deps.archive.writeManifest(workspaceId, manifest);
    await deps.archive.commit(workspaceId, revision);

    await ctx.progress({ step: 'attach', percent: 85 });
    const checkpoint = await deps.checkpoints.record({
      workspaceId,
      generation,
      kind: 'portable_workspace',
      workspaceRevision: revision,
      sourceTurnId: request.turnId,
      reason: request.reason,
      files: manifest.files,
      bytes: manifest.bytes,
    });
    await deps.checkpoints.attach(workspaceId, checkpoint.id, generation, { expectedHead: head?.id ?? null });
    await deps.archive.flipCurrent(workspaceId, revision);
    await ctx.progress({ step: 'done', percent: 100 });
    return {
      workspaceId,
      revision,
      generation,
      files: manifest.files,
      bytes: manifest.bytes,
      changedFiles: scan.copiedFiles,
      deletedFiles: removed.length,
      unchanged: false,
      durationMs: Date.now() - started,
      coveredSeq: request.coveredSeq,
      ...treeReport(scan),
    };
  } finally {
    await tree.release();
    // A temporary revision that was not committed is litter: remove it now (GC covers crashes).
    await removeTree(tmp).catch(() => undefined);
  }
}


// True when the live tree has no entries; a tree that cannot be opened as a real directory is an empty source.
export async function isEmptyTree(root: string, workspaceId: string): Promise<boolean> {
  let dir: DirHandle;
  try {
    dir = await DirHandle.open(root);
  } catch (error) {
    throw new EmptySourceError(`workspace ${workspaceId}: live tree ${root} is not a readable directory (${errnoOf(error) ?? String(error)})`, { context: { workspaceId }, cause: error });
  }
  try {
    return (await dir.names(1)).length === 0;
  } finally {
    await dir.close();
  }
}

/**
 * Refuses to commit a torn tree: its root was removed or replaced while it was read, or (for a
 * reconcile, which would delete whatever it missed) more entries vanished than normal work explains.
 */
export function checkSourceIntact(request: PersistRequest, scan: Pick<BuiltTree, 'rootChanged' | 'vanished' | 'walked'>): void {
  const context = { workspaceId: request.workspaceId, vanished: scan.vanished, walked: scan.walked };
  if (scan.rootChanged) {
    throw new TreeChangedError(`workspace ${request.workspaceId}: the live tree was removed or replaced while it was read; nothing committed`, { context });
  }
  if (request.delete && scan.vanished > vanishedTolerance(scan.walked)) {
    throw new TreeChangedError(`workspace ${request.workspaceId}: ${scan.vanished} of ${scan.walked} entries vanished while the live tree was read (tolerance ${vanishedTolerance(scan.walked)}); not committing a torn reconcile`, { context });
  }
}

/** What a walk reports about the entries it did not take. */
type TreeReportSource = Pick<BuiltTree, 'refused' | 'refusedCount' | 'skipped' | 'strippedModes'>;

// Logs what the tree held that the archive does not take (refused entries, skipped devices and sockets).
export function reportTree(logger: Logger, workspaceId: string, scan: TreeReportSource): void {
  for (const refusal of scan.refused) logger.warn({ err: refusal, workspaceId }, `persist refused ${refusal.path} (${refusal.limit})`);
  if (scan.refusedCount > scan.refused.length) logger.warn({ workspaceId, refused: scan.refusedCount }, `persist refused ${scan.refusedCount - scan.refused.length} more entries`);
  const { devices, sockets } = scan.skipped;
  if (devices + sockets > 0) logger.info({ workspaceId, devices, sockets }, 'persist skipped device nodes and sockets (never archived)');
  if (scan.strippedModes > 0) logger.info({ workspaceId, strippedModes: scan.strippedModes }, 'persist dropped setuid/setgid bits');
}

/** The result fields describing what a persist did not take. */
export function treeReport(scan: TreeReportSource): Pick<PersistResult, 'refusedEntries' | 'refusedPaths' | 'skippedEntries'> {
  return {
    refusedEntries: scan.refusedCount,
    refusedPaths: scan.refused.slice(0, 20).map((r) => `${r.path} (${r.limit})`),
    skippedEntries: scan.skipped.devices + scan.skipped.sockets,
  };
}

// Files of `before` that are not files in `after`.
function countRemovedFiles(before: RevisionManifest | null, after: readonly { p: string; t: string }[]): number {
  if (!before) return 0;
  const files = new Set(after.filter((e) => e.t === 'f').map((e) => e.p));
  return before.entries.filter((e) => e.t === 'f' && !files.has(e.p)).length;
}

// The result of a run that found nothing new to record.
function unchangedResult(request: PersistRequest, revision: string | null, current: RevisionManifest | null, started: number): PersistResult {
  return {
    workspaceId: request.workspaceId,
    revision,
    generation: request.generation,
    files: current?.files ?? 0,
    bytes: current?.bytes ?? 0,
    changedFiles: 0,
    deletedFiles: 0,
    unchanged: true,
    durationMs: Date.now() - started,
    coveredSeq: request.coveredSeq,
  };
}
