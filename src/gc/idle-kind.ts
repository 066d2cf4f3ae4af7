/**
 * Idle reap: a workspace is idle when it is quiescent (no turn open, no exec or file operation
 * running: activity-store.ts) and has had no activity for FLEET_IDLE_TTL_MS. Such a workspace gets
 * a reconcile persist with `reason: idle-reap`, after which the persist processor stops the
 * sandbox and its checkpoints, if it is still idle then. GC only enqueues (it never persists inline).
 */
import type { ActivityStore } from '../state/activity-store.js';
import type { AddressStore } from '../state/address-store.js';
import type { GcItem, GcKindRunner } from './gc-kind.js';

// Whether the workspace is idle right now (its last activity before `cutoff` and nothing holding it).
export async function isIdle(deps: { readonly addresses: Pick<AddressStore, 'lastActivity'>; readonly activity: Pick<ActivityStore, 'quiescent'> }, workspaceId: string, cutoff: number): Promise<boolean> {
  const last = await deps.addresses.lastActivity(workspaceId);
  if (last === null || last >= cutoff) return false;
  return deps.activity.quiescent(workspaceId);
}

export const idleKind: GcKindRunner = {
  async plan(ctx) {
    const { deps, now } = ctx;
    const cutoff = now - deps.config.idleTtlMs;
    const items: GcItem[] = [];
    for (const workspaceId of await deps.addresses.idleSince(cutoff, ctx.limit * 4)) {
      const address = await deps.addresses.get(workspaceId);
      if (!address) continue;
      const runtime = await deps.runtime.get(workspaceId);
      if (runtime && runtime.state !== 'ready') continue;
      // A long turn or a running command is not idle, however long ago it started.
      if (!(await deps.activity.quiescent(workspaceId, now))) continue;
      items.push({ id: workspaceId, workspaceId, description: `idle workspace (g${address.generation}) to flush and stop`, bytes: 0 });
      if (items.length >= ctx.limit) break;
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    const cutoff = Date.now() - ctx.deps.config.idleTtlMs;
    for (const item of planned) {
      const address = await ctx.deps.addresses.get(item.id);
      if (!address || !(await isIdle(ctx.deps, item.id, cutoff))) continue;
      await ctx.deps.client.persist({ workspaceId: item.id, generation: address.generation, delete: true, reason: 'idle-reap' });
      out.push(item);
    }
    return out;
  },
};
