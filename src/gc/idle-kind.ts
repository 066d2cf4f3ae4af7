/**
 * Idle reap: workspaces without activity for FLEET_IDLE_TTL_MS get a reconcile persist with
 * `reason: idle-reap`, after which the persist processor stops the sandbox and its checkpoints.
 * GC only enqueues (it never persists inline).
 */
import type { GcKindRunner, GcItem } from './gc-kind.js';

export const idleKind: GcKindRunner = {
  async plan(ctx) {
    const { services, now } = ctx;
    const items: GcItem[] = [];
    for (const workspaceId of await services.addresses.idleSince(now - services.config.idleTtlMs, ctx.limit * 4)) {
      const address = await services.addresses.get(workspaceId);
      if (!address) continue;
      const runtime = await services.runtime.get(workspaceId);
      if (runtime && runtime.state !== 'ready') continue;
      items.push({ id: workspaceId, workspaceId, description: `idle workspace (g${address.generation}) to flush and stop`, bytes: 0 });
      if (items.length >= ctx.limit) break;
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    for (const item of planned) {
      const address = await ctx.services.addresses.get(item.id);
      if (!address) continue;
      await ctx.services.client.persist({ workspaceId: item.id, generation: address.generation, delete: true, reason: 'idle-reap' });
      out.push(item);
    }
    return out;
  },
};
