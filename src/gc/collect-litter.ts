/**
 * Litter of interrupted persists: temporary revisions (`revs/.tmp-*`) and revision directories
 * renamed into place without a manifest. Only entries older than the grace period go (a
 * younger one may belong to a persist still running), and never what `current` points at.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ArchiveStore } from '../archive/archive-store.js';

export interface LitterItem {
  readonly workspaceId: string;
  readonly path: string;
  readonly kind: 'temporary' | 'unmanifested';
  readonly ageMs: number;
}

/** Lists litter older than `graceMs` across the given workspaces (at most `limit`). */
export async function findLitter(archive: ArchiveStore, workspaceIds: readonly string[], graceMs: number, limit: number, now = Date.now()): Promise<LitterItem[]> {
  const out: LitterItem[] = [];
  for (const workspaceId of workspaceIds) {
    const paths = archive.paths(workspaceId);
    const current = await archive.current(workspaceId);
    const candidates = [
      ...(await archive.temporaries(workspaceId)).map((name) => ({ name, kind: 'temporary' as const })),
      ...(await archive.unmanifested(workspaceId)).filter((name) => name !== current).map((name) => ({ name, kind: 'unmanifested' as const })),
    ];
    for (const { name, kind } of candidates) {
      const full = path.join(paths.revs, name);
      const ageMs = await archive.ageMs(full, now).catch(() => -1);
      if (ageMs >= graceMs) out.push({ workspaceId, path: full, kind, ageMs });
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** Removes litter items; returns how many were removed. */
export async function removeLitter(items: readonly LitterItem[]): Promise<number> {
  for (const item of items) await rm(item.path, { recursive: true, force: true });
  return items.length;
}
