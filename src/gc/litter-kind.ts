/** Litter of killed or failed persists (temporaries, manifest-less revisions), older than the persist deadline. */
import type { FleetServices } from '../runtime/services.js';
import { findLitter, LITTER_DESCRIPTIONS, removeLitter } from './collect-litter.js';
import type { GcContext, GcKindRunner } from './gc-kind.js';
import { reclaimableBytes } from './reclaimable-bytes.js';

// The litter a run may remove now.
async function litterOf(ctx: GcContext) {
  const { archive, checkpoints, config } = ctx.services;
  return findLitter(archive, await archive.workspaces(), config.deadlines.persistMs, ctx.limit, ctx.now, attachedIn(checkpoints));
}

// Whether the checkpoint store lists a portable revision as attached.
function attachedIn(checkpoints: FleetServices['checkpoints']) {
  return async (workspaceId: string, revision: string) => (await checkpoints.byRevision(workspaceId, 'portable_workspace', revision))?.attachedAt != null;
}

export const litterKind: GcKindRunner = {
  async plan(ctx) {
    const litter = await litterOf(ctx);
    return Promise.all(
      litter.map(async (l) => ({ id: l.path, workspaceId: l.workspaceId, description: `${LITTER_DESCRIPTIONS[l.kind]} (${Math.round(l.ageMs / 1000)} s old)`, bytes: await reclaimableBytes(l.path) })),
    );
  },
  async apply(ctx, planned) {
    const litter = await litterOf(ctx);
    const allowed = new Set(planned.map((p) => p.id));
    const doomed = litter.filter((l) => allowed.has(l.path));
    await removeLitter(doomed);
    return planned.filter((p) => doomed.some((d) => d.path === p.id));
  },
};
