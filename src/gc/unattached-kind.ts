/**
 * Unattached checkpoints older than FLEET_UNATTACHED_GRACE_MS (recorded but never made
 * authoritative, or rolled back): collected from the checkpoint store in one bounded batch,
 * then their bytes (archive revision or provider snapshot) are removed. Attached ones are never
 * returned by the store, and `current` is never removed.
 */
import type { IdSet } from '../providers/id-rules.js';
import type { CheckpointKind } from '../state/checkpoint-store.js';
import { idsValid } from './checked-ids.js';
import type { GcKindRunner, GcContext, GcItem } from './gc-kind.js';
import { revisionBytes } from './reclaimable-bytes.js';
import { removeRevision } from './remove-revision.js';

const before = (ctx: GcContext) => ctx.now - ctx.deps.config.retention.unattachedGraceMs;

// The ids that removing a checkpoint's bytes acts on (read from Redis: checked every time).
const idsOf = (c: { id: string; workspaceId: string; kind: CheckpointKind; workspaceRevision: string }): IdSet => ({
  checkpointId: c.id,
  workspaceId: c.workspaceId,
  checkpointKind: c.kind,
  ...(c.kind === 'portable_workspace' ? { revision: c.workspaceRevision } : { snapshotId: c.workspaceRevision }),
});

export const unattachedKind: GcKindRunner = {
  async plan(ctx) {
    const checkpoints = await ctx.deps.checkpoints.listUnattached(before(ctx), ctx.limit);
    const items: GcItem[] = [];
    for (const c of checkpoints) {
      if (!idsValid(ctx, idsOf(c))) continue;
      const bytes = c.kind === 'portable_workspace' ? await revisionBytes(ctx.deps.archive, c.workspaceId, c.workspaceRevision) : 0;
      items.push({ id: c.workspaceRevision, workspaceId: c.workspaceId, description: `unattached ${c.kind} checkpoint (${c.reason || 'no reason'})`, bytes });
    }
    return items;
  },
  async apply(ctx, planned) {
    const collected = await ctx.deps.checkpoints.collectUnattached(before(ctx), ctx.limit);
    const bytesById = new Map(planned.map((p) => [p.id, p.bytes]));
    const out: GcItem[] = [];
    for (const c of collected) {
      // The record is gone already; bytes named by an invalid id are left for an operator.
      if (!idsValid(ctx, idsOf(c))) continue;
      if (c.kind === 'portable_workspace') {
        const bytes = bytesById.get(c.workspaceRevision) ?? (await revisionBytes(ctx.deps.archive, c.workspaceId, c.workspaceRevision));
        if (await removeRevision(ctx.deps.archive, c.workspaceId, c.workspaceRevision)) {
          out.push({ id: c.workspaceRevision, workspaceId: c.workspaceId, description: 'unattached revision removed', bytes });
        }
      } else {
        const provider = (await ctx.deps.addresses.get(c.workspaceId))?.provider ?? ctx.deps.config.provider;
        if (!idsValid(ctx, { provider, snapshotId: c.workspaceRevision })) continue;
        await ctx.deps.providers.get(provider).deleteSnapshot(c.workspaceRevision, ctx.signal);
        out.push({ id: c.workspaceRevision, workspaceId: c.workspaceId, description: 'unattached provider snapshot deleted', bytes: 0 });
      }
    }
    return out;
  },
};
