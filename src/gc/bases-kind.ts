/**
 * Base snapshots past retention (G6): retired only when not active, not the rollback candidate
 * of an active base, referenced by no workspace (checked against each referencing workspace's
 * runtime provenance) and older than FLEET_BASE_RETENTION_MS (14 days by default). Retiring
 * deletes the provider snapshot and keeps the registry entry as `retired`.
 */
import type { FleetServices } from '../runtime/services.js';
import { idsValid } from './checked-ids.js';
import type { GcKindRunner, GcItem } from './gc-kind.js';

// Workspaces that still name the snapshot as their provenance.
async function liveReferences(services: FleetServices, snapshotId: string): Promise<string[]> {
  const refs: string[] = [];
  for (const workspaceId of await services.bases.referencedBy(snapshotId)) {
    const runtime = await services.runtime.get(workspaceId);
    if (runtime?.baseSnapshotId === snapshotId) refs.push(workspaceId);
  }
  return refs;
}

export const basesKind: GcKindRunner = {
  async plan(ctx) {
    const { services, now } = ctx;
    const items: GcItem[] = [];
    for (const entry of await services.bases.list()) {
      if (entry.status === 'retired' || entry.active) continue;
      if (!idsValid(ctx, { snapshotId: entry.snapshotId, provider: entry.provider })) continue;
      if (now - entry.createdAt < services.config.retention.baseRetentionMs) continue;
      if (await services.bases.isActiveOrCandidate(entry.snapshotId)) continue;
      if ((await liveReferences(services, entry.snapshotId)).length > 0) continue;
      items.push({ id: entry.snapshotId, description: `${entry.status} base ${entry.version} (${entry.provider}, lane ${entry.lane})`, bytes: 0 });
      if (items.length >= ctx.limit) break;
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    for (const item of planned) {
      // Re-check: an activation or a new reference may have happened since the plan.
      const entry = await ctx.services.bases.get(item.id);
      if (!entry || entry.active || (await ctx.services.bases.isActiveOrCandidate(item.id)) || (await liveReferences(ctx.services, item.id)).length > 0) continue;
      if (!idsValid(ctx, { snapshotId: item.id, provider: entry.provider })) continue;
      if (entry.status === 'ready') await ctx.services.providers.get(entry.provider as 'local' | 'vercel').deleteSnapshot(item.id, ctx.signal);
      await ctx.services.bases.update(item.id, { status: 'retired', retiredAt: Date.now() });
      out.push(item);
    }
    return out;
  },
};
