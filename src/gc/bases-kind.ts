/**
 * Base snapshots past retention (G6): retired only when not active, not the rollback candidate
 * of an active base, referenced by no workspace (a reference whose workspace's runtime no longer
 * names the base is dropped first) and older than FLEET_BASE_RETENTION_MS (14 days by default).
 * Retiring is claimed in one script (`retiring`: no activation can race it), then the provider
 * snapshot is deleted and the entry kept as `retired`. A claim left by a crash is finished by the
 * next run.
 */
import type { FleetServices } from '../runtime/services.js';
import { idsValid } from './checked-ids.js';
import type { GcKindRunner, GcItem } from './gc-kind.js';

// Workspaces that still name the snapshot as their provenance; with `prune`, stale references are dropped.
async function liveReferences(services: FleetServices, snapshotId: string, prune: boolean): Promise<string[]> {
  const refs: string[] = [];
  for (const workspaceId of await services.bases.referencedBy(snapshotId)) {
    const runtime = await services.runtime.get(workspaceId);
    if (runtime?.baseSnapshotId === snapshotId) refs.push(workspaceId);
    else if (prune) await services.bases.removeReference(snapshotId, workspaceId);
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
      if ((await liveReferences(services, entry.snapshotId, false)).length > 0) continue;
      items.push({ id: entry.snapshotId, description: `${entry.status} base ${entry.version} (${entry.provider}, lane ${entry.lane})`, bytes: 0 });
      if (items.length >= ctx.limit) break;
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    for (const item of planned) {
      const entry = await ctx.services.bases.get(item.id);
      if (!entry || !idsValid(ctx, { snapshotId: item.id, provider: entry.provider })) continue;
      if ((await liveReferences(ctx.services, item.id, true)).length > 0) continue;
      // The claim re-checks everything in one step: an activation or a new reference since the plan wins.
      const claim = await ctx.services.bases.beginRetire(item.id, Date.now() - ctx.services.config.retention.baseRetentionMs);
      if (!claim.claimed) {
        ctx.services.logger.info({ snapshotId: item.id, why: claim.why }, 'base not retired');
        continue;
      }
      // A failed bake never produced a provider snapshot.
      if (entry.status !== 'failed') await ctx.services.providers.get(entry.provider as 'local' | 'vercel').deleteSnapshot(item.id, ctx.signal);
      await ctx.services.bases.finishRetire(item.id);
      out.push(item);
    }
    return out;
  },
};
