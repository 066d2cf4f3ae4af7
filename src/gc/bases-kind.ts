/**
 * Base snapshots past retention (G6): retired only when not active, not the rollback candidate
 * of an active base, referenced by no workspace (a reference whose workspace's runtime no longer
 * names the base is dropped first) and unprotected for FLEET_BASE_RETENTION_MS (14 days by
 * default), counted from the moment it stopped being active or the rollback target (`rotatedAt`),
 * or from its creation if it never was. Only an explicit run deletes (`fleet gc --kind bases`): the
 * schedule runs this kind as a dry run, listing candidates (gc-schedules.ts).
 * Retiring is claimed in one script (`retiring`: no activation can race it), then the provider
 * snapshot is deleted, its archived files' record dropped (archive/base-roots.ts) and the entry
 * kept as `retired`. A claim left by a crash is finished by the next run.
 */
import type { GcDeps, GcItem, GcKindRunner } from './gc-kind.js';
import { idsValid } from './checked-ids.js';

// Workspaces that still name the snapshot as their provenance; with `prune`, stale references are dropped.
async function liveReferences(deps: GcDeps, snapshotId: string, prune: boolean): Promise<string[]> {
  const refs: string[] = [];
  for (const workspaceId of await deps.bases.referencedBy(snapshotId)) {
    const runtime = await deps.runtime.get(workspaceId);
    if (runtime?.baseSnapshotId === snapshotId) refs.push(workspaceId);
    else if (prune) await deps.bases.removeReference(snapshotId, workspaceId);
  }
  return refs;
}

export const basesKind: GcKindRunner = {
  async plan(ctx) {
    const { deps, now } = ctx;
    const items: GcItem[] = [];
    for (const entry of await deps.bases.list()) {
      if (entry.status === 'retired' || entry.active) continue;
      if (!idsValid(ctx, { snapshotId: entry.snapshotId, provider: entry.provider })) continue;
      if (now - Math.max(entry.createdAt, entry.rotatedAt ?? 0) < deps.config.retention.baseRetentionMs) continue;
      if (await deps.bases.isActiveOrCandidate(entry.snapshotId)) continue;
      if ((await liveReferences(deps, entry.snapshotId, false)).length > 0) continue;
      const since = entry.rotatedAt === null ? `created ${new Date(entry.createdAt).toISOString()}` : `rotated out ${new Date(entry.rotatedAt).toISOString()}`;
      items.push({ id: entry.snapshotId, description: `${entry.status} base ${entry.version} (${entry.provider}, lane ${entry.lane}, ${since})`, bytes: 0 });
      if (items.length >= ctx.limit) break;
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    for (const item of planned) {
      const entry = await ctx.deps.bases.get(item.id);
      if (!entry || !idsValid(ctx, { snapshotId: item.id, provider: entry.provider })) continue;
      if ((await liveReferences(ctx.deps, item.id, true)).length > 0) continue;
      // The claim re-checks everything in one step: an activation or a new reference since the plan wins.
      const claim = await ctx.deps.bases.beginRetire(item.id, Date.now() - ctx.deps.config.retention.baseRetentionMs);
      if (!claim.claimed) {
        ctx.deps.logger.info({ snapshotId: item.id, why: claim.why }, 'base not retired');
        continue;
      }
      // A failed bake never produced a provider snapshot.
      if (entry.status !== 'failed') await ctx.deps.providers.get(entry.provider as 'local' | 'vercel').deleteSnapshot(item.id, ctx.signal);
      // Its archived files are no longer a root of the objects GC (revisions that share them keep them).
      await ctx.deps.archive.bases.remove(item.id);
      await ctx.deps.bases.finishRetire(item.id);
      out.push(item);
    }
    return out;
  },
};
