/**
 * The basis of a format 2 persist (the current revision as trees, converted once from a format 1
 * revision) and the checkpoint's question whether its exact tree may be committed as a reconcile.
 * Shared by the walk of a host tree (persist-to-store.ts) and the build from a listing (persist-listed.ts).
 */
import { countRemoved } from '../archive/revision-reader.js';
import { StoreBuilder, type StoreBasis } from '../archive/store-builder.js';
import { DirHandle } from '../tree/dir-handle.js';
import { UNLIMITED_TREE, vanishedTolerance } from '../tree/tree-limits.js';
import type { checkSourceIntact, PersistDeps } from './persist-workspace.js';
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
  if (record) return { root: record.root, scanStartedAt: BigInt(record.scanStartedAt), files: record.files, entries: record.entries, generation: record.generation, native: true };
  const manifest = await deps.archive.readManifest(workspaceId, revision);
  if (!manifest) return null;
  const source = await DirHandle.open(deps.archive.paths(workspaceId).revision(revision));
  try {
    const builder = new StoreBuilder({ store: deps.archive.objects, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal });
    const root = await builder.build(source);
    // Times of a converted revision are the archive copies', not the live files': no racily-clean rule applies.
    return { root, scanStartedAt: 0n, files: manifest.files, entries: manifest.entries.length, generation: manifest.generation, native: false };
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

