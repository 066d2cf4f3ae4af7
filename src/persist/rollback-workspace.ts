/**
 * Rollback: the content of an earlier revision becomes the new current revision (a new revision,
 * so history is kept), fenced on the generation, and the live sandbox is restored from it.
 * The new revision is built from the old one by hard links only (cheap), then goes through the
 * same commit protocol as a persist: fsync, manifest, rename, record, fenced attach, flip.
 */
import { syncFilesystem } from '../archive/fsync.js';
import { makeManifest } from '../archive/manifest.js';
import { newRevisionId } from '../archive/revision-id.js';
import { FleetError } from '../errors/fleet-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import type { RollbackResult } from '../queues/persist.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { Config } from '../config.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { AddressStore } from '../state/address-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { StoreWriters } from '../state/store-writers.js';
import { commitRecord } from '../archive/commit-record.js';
import { asStoreWriter } from '../state/store-writers.js';
import type { RevisionRecord } from '../archive/revision-record.js';
import type { Address } from '../state/address-store.js';
import { removeTree } from '../tree/remove-tree.js';
import { UNLIMITED_TREE } from '../tree/tree-limits.js';
import { buildRevisionTree } from '../archive/build-revision-tree.js';
import type { PersistContext } from './persist-workspace.js';

/** Thrown when the requested revision is not a committed revision of the workspace. Never retried. */
export class RevisionNotFoundError extends FleetError {
  readonly code = 'RevisionNotFound';
  readonly retryable = false;
}

export interface RollbackRequest {
  readonly workspaceId: string;
  readonly generation: number;
  readonly revision: string;
}

export interface RollbackDeps {
  readonly addresses: Pick<AddressStore, 'get' | 'countFenceRejection'>;
  readonly archive: ArchiveStore;
  readonly checkpoints: CheckpointStore;
  readonly storeWriters: StoreWriters;
  readonly config: Pick<Config, 'systemPath'>;
  providerFor(address: Address): SandboxProvider;
}

export async function rollbackWorkspace(deps: RollbackDeps, request: RollbackRequest, ctx: PersistContext): Promise<RollbackResult> {
  const started = Date.now();
  const { workspaceId, generation, revision: source } = request;
  const address = await deps.addresses.get(workspaceId);
  if (!address || address.generation !== generation) {
    await deps.addresses.countFenceRejection();
    throw new StaleGenerationError(workspaceId, generation, address?.generation ?? null);
  }
  const sourceRecord = await deps.archive.readRecord(workspaceId, source);
  if (sourceRecord) return rollbackRecord(deps, request, sourceRecord, address, ctx, started);
  const sourceManifest = await deps.archive.readManifest(workspaceId, source);
  if (!sourceManifest) throw new RevisionNotFoundError(`workspace ${workspaceId} has no committed revision ${source}`, { context: { workspaceId, revision: source } });
  const head = await deps.checkpoints.current(workspaceId);
  const parent = head?.workspaceRevision ?? (await deps.archive.current(workspaceId));

  const paths = await deps.archive.ensure(workspaceId);
  const revision = newRevisionId(generation);
  const tmp = paths.tmp(revision);
  try {
    await ctx.progress({ step: 'copy', percent: 10 });
    // Every file of the source revision is hard-linked (its manifest is its own quick check).
    const scan = await buildRevisionTree({
      source: paths.revision(source),
      dest: tmp,
      basis: { root: paths.revision(source), manifest: sourceManifest },
      keepMissing: false,
      limits: UNLIMITED_TREE,
      signal: ctx.signal,
      systemPath: deps.config.systemPath,
    });
    const manifest = makeManifest(
      { workspaceId, revision, generation, reason: 'rollback', turnId: null, parent, mode: 'rollback', createdAt: new Date().toISOString() },
      scan,
    );
    await ctx.progress({ step: 'commit', percent: 40 });
    await syncFilesystem(tmp, deps.config.systemPath, ctx.signal);
    await deps.archive.writeManifest(workspaceId, manifest);
    await deps.archive.commit(workspaceId, revision);
    const checkpoint = await deps.checkpoints.record({
      workspaceId,
      generation,
      kind: 'portable_workspace',
      workspaceRevision: revision,
      reason: 'rollback',
      files: manifest.files,
      bytes: manifest.bytes,
    });
    await deps.checkpoints.attach(workspaceId, checkpoint.id, generation, { expectedHead: head?.id ?? null });
    await deps.archive.flipCurrent(workspaceId, revision);

    await ctx.progress({ step: 'restore', percent: 70 });
    const provider = deps.providerFor(address);
    await provider.importTree(address.handle, paths.revision(revision), ctx.signal);
    await provider.markReady(address.handle, { generation, source: revision, readyAt: Date.now() }, ctx.signal);
    await ctx.progress({ step: 'done', percent: 100 });
    return { workspaceId, revision, restoredFrom: source, generation, files: manifest.files, durationMs: Date.now() - started };
  } finally {
    await removeTree(tmp).catch(() => undefined);
  }
}

/**
 * A rollback to a format 2 revision: a new record naming the old revision's root tree (nothing is
 * copied: the objects and trees are shared), committed like any revision, then restored.
 */
async function rollbackRecord(deps: RollbackDeps, request: RollbackRequest, source: RevisionRecord, address: Address, ctx: PersistContext, started: number): Promise<RollbackResult> {
  const { workspaceId, generation } = request;
  const head = await deps.checkpoints.current(workspaceId);
  const parent = head?.workspaceRevision ?? (await deps.archive.current(workspaceId));
  await deps.archive.ensure(workspaceId);
  const revision = newRevisionId(generation);
  const record: RevisionRecord = {
    ...source,
    revision,
    generation,
    reason: 'rollback',
    turnId: null,
    parent,
    mode: 'rollback',
    createdAt: new Date().toISOString(),
    // The restored live files carry the archived times: no racily-clean window applies to them.
    scanStartedAt: source.scanStartedAt,
  };
  // The new record names the source's root by reference: declared to the objects GC first, then the
  // source is read again, so a GC that marks before the declaration still found the source's record.
  await asStoreWriter(deps.storeWriters, workspaceId, async (writer) => {
    await writer.declare(source.root);
    if ((await deps.archive.readRecord(workspaceId, source.revision))?.root !== source.root) {
      throw new RevisionNotFoundError(`workspace ${workspaceId} no longer has revision ${source.revision}`, { context: { workspaceId, revision: source.revision } });
    }
    await commitRecord({ archive: deps.archive, checkpoints: deps.checkpoints, systemPath: deps.config.systemPath }, record, {
      head,
      signal: ctx.signal,
      onStep: (step) => ctx.progress({ step, percent: step === 'commit' ? 40 : 55 }),
    });
  });
  await ctx.progress({ step: 'restore', percent: 70 });
  const provider = deps.providerFor(address);
  await provider.importTree(address.handle, deps.archive.paths(workspaceId).record(revision), ctx.signal);
  await provider.markReady(address.handle, { generation, source: revision, readyAt: Date.now() }, ctx.signal);
  await ctx.progress({ step: 'done', percent: 100 });
  return { workspaceId, revision, restoredFrom: request.revision, generation, files: record.files, durationMs: Date.now() - started };
}
