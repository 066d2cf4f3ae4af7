/**
 * Litter of interrupted persists (and rollbacks, backfills, GC deletes): every temporary the
 * archive names (`ArchiveStore.temps`: revisions, manifests and `current` links being written)
 * and revision directories renamed into place without a manifest. Only entries older than the
 * grace period go (a younger one may belong to a persist still running; the grace is the
 * persist deadline, past which no persist still writes), never what `current` points at, and
 * never a manifest-less revision that history still lists as attached (a damaged revision is
 * for `fleet verify` to report, not for GC to finish off). Temporaries of the shared object
 * store (`.store/tmp/`) belong to no workspace and wait for the objects grace period.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ArchiveTempKind } from '../archive/archive-paths.js';
import type { ArchiveStore } from '../archive/archive-store.js';

export type LitterKind = ArchiveTempKind | 'unmanifested';

export interface LitterItem {
  /** The workspace whose archive holds it; null for the shared store's temporaries. */
  readonly workspaceId: string | null;
  readonly path: string;
  readonly kind: LitterKind;
  readonly ageMs: number;
}

/** True when the checkpoint store lists a revision as attached (its directory is then kept). */
export type IsAttached = (workspaceId: string, revision: string) => Promise<boolean>;

/** What each kind of litter is, for GC listings. */
export const LITTER_DESCRIPTIONS: Readonly<Record<LitterKind, string>> = {
  revision: 'temporary revision directory',
  manifest: 'temporary manifest file',
  current: 'temporary current link',
  unmanifested: 'unmanifested revision directory',
  store: 'temporary object or tree of the store',
};

/** Lists litter older than `graceMs` across the given workspaces (at most `limit`). */
export async function findLitter(
  archive: ArchiveStore,
  workspaceIds: readonly string[],
  graceMs: number,
  limit: number,
  now = Date.now(),
  isAttached: IsAttached = async () => false,
): Promise<LitterItem[]> {
  const out: LitterItem[] = [];
  for (const workspaceId of workspaceIds) {
    const paths = archive.paths(workspaceId);
    const current = await archive.current(workspaceId);
    const candidates: { path: string; kind: LitterKind }[] = (await archive.temps(workspaceId)).map((t) => ({ path: t.path, kind: t.kind }));
    for (const name of await archive.unmanifested(workspaceId)) {
      if (name === current || (await isAttached(workspaceId, name))) continue;
      candidates.push({ path: path.join(paths.revs, name), kind: 'unmanifested' });
    }
    for (const { path: full, kind } of candidates) {
      const ageMs = await archive.ageMs(full, now).catch(() => -1);
      if (ageMs >= graceMs) out.push({ workspaceId, path: full, kind, ageMs });
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** Lists temporaries of the shared object store older than `graceMs` (at most `limit`). */
export async function findStoreLitter(archive: ArchiveStore, graceMs: number, limit: number, now = Date.now()): Promise<LitterItem[]> {
  const out: LitterItem[] = [];
  for (const temp of await archive.storeTemps()) {
    if (out.length >= limit) break;
    const ageMs = await archive.ageMs(temp.path, now).catch(() => -1);
    if (ageMs >= graceMs) out.push({ workspaceId: null, path: temp.path, kind: temp.kind, ageMs });
  }
  return out;
}

/** Removes litter items (a link itself, never its target); returns how many were removed. */
export async function removeLitter(items: readonly LitterItem[]): Promise<number> {
  for (const item of items) await rm(item.path, { recursive: true, force: true });
  return items.length;
}
