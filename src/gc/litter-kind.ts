/**
 * Litter of killed or failed persists (temporaries, manifest-less revisions), older than the
 * longest job that writes them; temporaries of the shared object store once older than the
 * objects grace period (an object being written, or one a GC died deleting).
 */
import path from 'node:path';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { GcContext, GcDeps, GcKindRunner } from './gc-kind.js';
import { idsValid } from './checked-ids.js';
import { tempKindOf } from '../archive/archive-paths.js';
import { findLitter, findStoreLitter, LITTER_DESCRIPTIONS, removeLitter, type LitterItem } from './collect-litter.js';
import { reclaimableBytes } from './reclaimable-bytes.js';

// The litter a run may remove now. Backfills write temporary revisions too, and run longer than a persist.
async function litterOf(ctx: GcContext) {
  const { archive, checkpoints, config } = ctx.deps;
  const graceMs = Math.max(config.deadlines.persistMs, config.deadlines.backfillMs);
  const litter = await findLitter(archive, await archive.workspaces(), graceMs, ctx.limit, ctx.now, attachedIn(checkpoints));
  return [...litter, ...(await findStoreLitter(archive, config.retention.objectGraceMs, ctx.limit - litter.length, ctx.now))];
}

// Whether the checkpoint store lists a portable revision as attached.
function attachedIn(checkpoints: GcDeps['checkpoints']) {
  return async (workspaceId: string, revision: string) => (await checkpoints.byRevision(workspaceId, 'portable_workspace', revision))?.attachedAt != null;
}

// A litter path must be one entry directly inside a valid workspace's `revs` directory, or its `current` temp, or a store temporary.
function validLitter(ctx: GcContext, archive: ArchiveStore, litter: LitterItem): boolean {
  const name = path.basename(litter.path);
  const inside = (parent: string) => name !== '' && name !== '.' && name !== '..' && path.join(parent, name) === litter.path;
  if (litter.workspaceId === null) {
    if (litter.kind === 'store' && tempKindOf('store', name) === 'store' && inside(archive.objects.tmpDir)) return true;
    ctx.skip({ field: 'path', value: litter.path, reason: `must be a temporary directly in ${archive.objects.tmpDir}` });
    return false;
  }
  if (!idsValid(ctx, { workspaceId: litter.workspaceId })) return false;
  const { revs, dir } = archive.paths(litter.workspaceId);
  if (inside(revs) || (litter.kind === 'current' && inside(dir))) return true;
  ctx.skip({ field: 'path', value: litter.path, reason: `must be an entry of ${revs}` });
  return false;
}

export const litterKind: GcKindRunner = {
  async plan(ctx) {
    const litter = await litterOf(ctx);
    return Promise.all(
      litter.filter((l) => validLitter(ctx, ctx.deps.archive, l)).map(async (l) => ({ id: l.path, ...(l.workspaceId ? { workspaceId: l.workspaceId } : {}), description: `${LITTER_DESCRIPTIONS[l.kind]} (${Math.round(l.ageMs / 1000)} s old)`, bytes: await reclaimableBytes(l.path) })),
    );
  },
  async apply(ctx, planned) {
    const litter = await litterOf(ctx);
    const allowed = new Set(planned.map((p) => p.id));
    const doomed = litter.filter((l) => allowed.has(l.path) && validLitter(ctx, ctx.deps.archive, l));
    await removeLitter(doomed);
    return planned.filter((p) => doomed.some((d) => d.path === p.id));
  },
};
