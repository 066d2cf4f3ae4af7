/**
 * Idle reap: a workspace is idle when it is quiescent (no turn open, no exec or file operation
 * running: activity-store.ts) and has had no activity for FLEET_IDLE_TTL_MS. Such a workspace gets
 * a reconcile persist with `reason: idle-reap`, after which the persist processor stops the
 * sandbox and its checkpoints, if it is still idle then. GC only enqueues (it never persists inline).
 */
import type { FleetServices } from '../runtime/services.js';
import type { GcKindRunner, GcItem } from './gc-kind.js';

// Whether the workspace is idle right now (its last activity before `cutoff` and nothing holding it).
export async function isIdle(services: Pick<FleetServices, 'activity' | 'addresses'>, workspaceId: string, cutoff: number): Promise<boolean> {
  const last = await services.addresses.lastActivity(workspaceId);
  if (last === null || last >= cutoff) return false;
  return services.activity.quiescent(workspaceId);
}

export const idleKind: GcKindRunner = {
  async plan(ctx) {
    const { services, now } = ctx;
    const cutoff = now - services.config.idleTtlMs;
    const items: GcItem[] = [];
    for (const workspaceId of await services.addresses.idleSince(cutoff, ctx.limit * 4)) {
      const address = await services.addresses.get(workspaceId);
      if (!address) continue;
      const runtime = await services.runtime.get(workspaceId);
      if (runtime && runtime.state !== 'ready') continue;
      // A long turn or a running command is not idle, however long ago it started.
      if (!(await services.activity.quiescent(workspaceId, now))) continue;
      items.push({ id: workspaceId, workspaceId, description: `idle workspace (g${address.generation}) to flush and stop`, bytes: 0 });
      if (items.length >= ctx.limit) break;
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    const cutoff = Date.now() - ctx.services.config.idleTtlMs;
    for (const item of planned) {
      const address = await ctx.services.addresses.get(item.id);
      if (!address || !(await isIdle(ctx.services, item.id, cutoff))) continue;
      await ctx.services.client.persist({ workspaceId: item.id, generation: address.generation, delete: true, reason: 'idle-reap' });
      out.push(item);
    }
    return out;
  },
};
