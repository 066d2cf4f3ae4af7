/**
 * The persist protocol (DESIGN.md "Persist protocol"), provider-neutral:
 *
 *  1. fence: the generation equals the address store's (else StaleGeneration, nothing written)
 *  2. gate: the sandbox carries a ready marker of this generation (else NotReady)
 *  3. allocate a never-reused revision id
 *  4. build the tree in `revs/.tmp-<id>`: unchanged files (size, mode, nanosecond mtime) are
 *     hard-linked from the current revision, rsync copies the rest; upload-only keeps files the
 *     tree no longer has
 *  5. shrink guard; an unchanged tree records nothing; fsync, manifest, rename into place
 *  6. record the checkpoint, attach it fenced on generation (and on the head it started from),
 *     then flip `current` by rename. Only then is the request acknowledged.
 *  7. any failure before 6 leaves the previous revision current and only collectable litter.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import type { ArchiveStore } from '../archive/archive-store.js';
import { syncFilesystem } from '../archive/fsync.js';
import { makeManifest, removedPaths, scanTree, type RevisionManifest } from '../archive/manifest.js';
import { newRevisionId } from '../archive/revision-id.js';
import { EmptySourceError } from '../errors/empty-source-error.js';
import { NotReadyError } from '../errors/not-ready-error.js';
import { ShrinkGuardError } from '../errors/shrink-guard-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import type { Logger } from '../logger.js';
import type { PersistReason, PersistResult } from '../queues/persist.js';
import { RsyncError } from '../rsync/rsync-error.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { Address, AddressStore } from '../state/address-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { Progress } from '../workers/processor-context.js';
import { buildRevisionTree } from './build-revision-tree.js';
import { mergeMissing } from './merge-missing.js';
import { shrinkGuardRefusal } from './shrink-guard.js';

export interface PersistRequest {
  readonly workspaceId: string;
  readonly generation: number;
  readonly delete: boolean;
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
  /** Deadline of the rsync step. */
  readonly rsyncTimeoutMs: number;
  /** Counts rsync exit codes and bytes (metrics). */
  readonly onRsyncExit?: (exitCode: number) => void;
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
  const current: RevisionManifest | null = currentRevision ? await deps.archive.readManifest(workspaceId, currentRevision) : null;
  if (current && current.generation > generation) {
    await deps.addresses.countFenceRejection();
    throw new StaleGenerationError(workspaceId, generation, current.generation);
  }

  const tree = await provider.openTree(address.handle, ctx.signal);
  const revision = newRevisionId(generation);
  const tmp = paths.tmp(revision);
  try {
    const names = await readdir(tree.path).catch((error: NodeJS.ErrnoException) => {
      throw new EmptySourceError(`workspace ${workspaceId}: live tree ${tree.path} is unreadable (${error.code ?? error.message})`, { context: { workspaceId } });
    });
    if (names.length === 0) {
      if (current && current.entries.length > 0) {
        throw new EmptySourceError(`workspace ${workspaceId}: live tree is empty but revision ${currentRevision} has ${current.files} files; refusing to persist (unmounted or wiped?)`, {
          context: { workspaceId, revision: currentRevision },
        });
      }
      return unchangedResult(request, currentRevision, current, started);
    }

    await mkdir(tmp, { mode: 0o700 });
    await ctx.progress({ step: 'link', percent: 10 });
    const built = await buildRevisionTree({
      source: tree.path,
      dest: tmp,
      basis: current && currentRevision ? { root: paths.revision(currentRevision), manifest: current } : null,
      operation: `persist ${workspaceId}`,
      timeoutMs: deps.rsyncTimeoutMs,
      signal: ctx.signal,
      systemPath: deps.systemPath,
      // Files vanishing mid-run are normal for a live upload-only checkpoint; a reconcile retries.
      acceptExitCodes: request.delete ? [] : [24],
      onLinkProgress: (done) => {
        const total = current?.entries.length ?? done;
        void ctx.progress({ step: 'link', done, total, percent: 10 + Math.floor(20 * Math.min(1, done / Math.max(1, total))) });
      },
      onCopy: () => ctx.progress({ step: 'rsync', percent: 30 }),
    }).catch((error: unknown) => {
      if (error instanceof RsyncError) deps.onRsyncExit?.(error.exitCode);
      throw error;
    });
    const { rsync } = built;
    deps.onRsyncExit?.(rsync.exitCode);
    if (rsync.exitCode === 24) ctx.logger.warn({ workspaceId }, 'files vanished during an upload-only persist (accepted)');

    if (!request.delete && current && currentRevision) {
      const kept = await mergeMissing(paths.revision(currentRevision), current, tmp, ctx.signal, built.linkedPaths);
      if (kept > 0) ctx.logger.debug({ kept }, 'upload-only: kept paths the live tree no longer has');
    }

    await ctx.progress({ step: 'scan', percent: 50 });
    const scan = await scanTree(tmp, current, ctx.signal);
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
      return unchangedResult(request, currentRevision, current, started);
    }

    await ctx.progress({ step: 'commit', percent: 70 });
    await syncFilesystem(tmp, deps.systemPath, ctx.signal);
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
    };
  } finally {
    await tree.release();
    // A temporary revision that was not committed is litter: remove it now (GC covers crashes).
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
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
