/** Temporary revision litter from killed persists, older than the persist deadline. */
import path from 'node:path';
import type { ArchiveStore } from '../archive/archive-store.js';
import { idsValid } from './checked-ids.js';
import { findLitter, removeLitter, type LitterItem } from './collect-litter.js';
import type { GcContext, GcKindRunner } from './gc-kind.js';
import { reclaimableBytes } from './reclaimable-bytes.js';

// A litter path must be one entry directly inside a valid workspace's `revs` directory.
function validLitter(ctx: GcContext, archive: ArchiveStore, litter: LitterItem): boolean {
  if (!idsValid(ctx, { workspaceId: litter.workspaceId })) return false;
  const revs = archive.paths(litter.workspaceId).revs;
  const name = path.basename(litter.path);
  if (name !== '' && name !== '.' && name !== '..' && path.join(revs, name) === litter.path) return true;
  ctx.skip({ field: 'path', value: litter.path, reason: `must be an entry of ${revs}` });
  return false;
}

export const litterKind: GcKindRunner = {
  async plan(ctx) {
    const { services } = ctx;
    const litter = await findLitter(services.archive, await services.archive.workspaces(), services.config.deadlines.persistMs, ctx.limit, ctx.now);
    return Promise.all(
      litter.filter((l) => validLitter(ctx, services.archive, l)).map(async (l) => ({ id: l.path, workspaceId: l.workspaceId, description: `${l.kind} revision directory (${Math.round(l.ageMs / 1000)} s old)`, bytes: await reclaimableBytes(l.path) })),
    );
  },
  async apply(ctx, planned) {
    const litter = await findLitter(ctx.services.archive, await ctx.services.archive.workspaces(), ctx.services.config.deadlines.persistMs, ctx.limit, ctx.now);
    const allowed = new Set(planned.map((p) => p.id));
    const doomed = litter.filter((l) => allowed.has(l.path) && validLitter(ctx, ctx.services.archive, l));
    await removeLitter(doomed);
    return planned.filter((p) => doomed.some((d) => d.path === p.id));
  },
};
