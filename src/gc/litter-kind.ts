/** Temporary revision litter from killed persists, older than the persist deadline. */
import { findLitter, removeLitter } from './collect-litter.js';
import type { GcKindRunner } from './gc-kind.js';
import { reclaimableBytes } from './reclaimable-bytes.js';

export const litterKind: GcKindRunner = {
  async plan(ctx) {
    const { services } = ctx;
    const litter = await findLitter(services.archive, await services.archive.workspaces(), services.config.deadlines.persistMs, ctx.limit, ctx.now);
    return Promise.all(
      litter.map(async (l) => ({ id: l.path, workspaceId: l.workspaceId, description: `${l.kind} revision directory (${Math.round(l.ageMs / 1000)} s old)`, bytes: await reclaimableBytes(l.path) })),
    );
  },
  async apply(ctx, planned) {
    const litter = await findLitter(ctx.services.archive, await ctx.services.archive.workspaces(), ctx.services.config.deadlines.persistMs, ctx.limit, ctx.now);
    const allowed = new Set(planned.map((p) => p.id));
    const doomed = litter.filter((l) => allowed.has(l.path));
    await removeLitter(doomed);
    return planned.filter((p) => doomed.some((d) => d.path === p.id));
  },
};
