/**
 * Restore, the mirror image of persist: archive revision → live tree (into a fresh staging tree,
 * swapped in), then the generation-tagged ready marker. The marker is cleared first and written
 * last, so a restore interrupted at any point leaves no marker and persist refuses to run.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import type { AddressStore } from '../state/address-store.js';

export interface RestoreRequest {
  readonly workspaceId: string;
  readonly generation: number;
  readonly handle: string;
  /** Revision to restore; `null` = an empty workspace. */
  readonly revision: string | null;
  readonly signal: AbortSignal;
}

export interface RestoreDeps {
  readonly addresses: AddressStore;
  readonly archive: ArchiveStore;
}

/** Restores `revision` into the incarnation and marks it ready. */
export async function restoreWorkspace(deps: RestoreDeps, provider: SandboxProvider, request: RestoreRequest): Promise<void> {
  const { workspaceId, generation, handle, revision, signal } = request;
  const current = await deps.addresses.generation(workspaceId);
  if (current !== generation) {
    await deps.addresses.countFenceRejection();
    throw new StaleGenerationError(workspaceId, generation, current);
  }
  // importTree clears the marker before it touches the tree (provider contract); a fresh
  // incarnation without a revision never had one (create clears it).
  if (revision) await provider.importTree(handle, await deps.archive.revisionSource(workspaceId, revision), signal);
  await provider.markReady(handle, { generation, source: revision ?? 'empty', readyAt: Date.now() }, signal);
}
