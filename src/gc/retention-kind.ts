/**
 * Attached revisions beyond retention: per workspace keep the newest FLEET_KEEP_REVISIONS
 * attached revisions plus every one younger than FLEET_KEEP_REVISIONS_MIN_AGE_MS, and never the
 * current one. Older ones lose their record (atomically refused for the head) and their bytes.
 */
import type { Checkpoint } from '../state/checkpoint-store.js';
import { idsValid } from './checked-ids.js';
import type { GcKindRunner, GcContext, GcItem } from './gc-kind.js';
import { revisionBytes } from './reclaimable-bytes.js';
import { removeRevision } from './remove-revision.js';

// True when a record read back from Redis names only valid ids of `workspaceId`'s own archive.
function validRecord(ctx: GcContext, workspaceId: string, c: Checkpoint): boolean {
  if (!idsValid(ctx, { workspaceId, checkpointId: c.id, revision: c.workspaceRevision })) return false;
  if (c.workspaceId === workspaceId) return true;
  ctx.skip({ field: 'workspaceId', value: c.workspaceId, reason: `checkpoint ${c.id} is listed under workspace ${workspaceId}` });
  return false;
}

export const retentionKind: GcKindRunner = {
  async plan(ctx) {
    const { deps, now, limit } = ctx;
    const { keepRevisions, keepRevisionsMinAgeMs } = deps.config.retention;
    const items: GcItem[] = [];
    for (const workspaceId of await deps.archive.workspaces()) {
      const head = await deps.checkpoints.current(workspaceId);
      const ids = await deps.checkpoints.attachedIds(workspaceId);
      const expired = ids.slice(0, Math.max(0, ids.length - keepRevisions));
      for (const id of expired) {
        const c = await deps.checkpoints.get(workspaceId, id);
        if (!c || c.id === head?.id || c.kind !== 'portable_workspace') continue;
        if (!validRecord(ctx, workspaceId, c)) continue;
        if (now - c.createdAt < keepRevisionsMinAgeMs) continue;
        if ((await deps.archive.current(workspaceId)) === c.workspaceRevision) continue;
        items.push({ id: c.id, workspaceId, description: `revision ${c.workspaceRevision} past retention`, bytes: await revisionBytes(deps.archive, workspaceId, c.workspaceRevision) });
        if (items.length >= limit) return items;
      }
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    for (const item of planned) {
      const c = item.workspaceId ? await ctx.deps.checkpoints.get(item.workspaceId, item.id) : null;
      if (!c || !item.workspaceId || !validRecord(ctx, item.workspaceId, c)) continue;
      if (!(await ctx.deps.checkpoints.forget(item.workspaceId, item.id))) continue;
      if (await removeRevision(ctx.deps.archive, item.workspaceId, c.workspaceRevision)) out.push(item);
    }
    return out;
  },
};
