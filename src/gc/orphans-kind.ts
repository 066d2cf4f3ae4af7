/**
 * Orphan sandboxes: incarnations that exist at a provider but are not the address store's for
 * their workspace (losers of a race, replaced incarnations whose destroy failed, leftovers of a
 * crash between create and publish). Young ones (younger than the provision deadline) are left
 * alone: they may be a provision in progress.
 */
import { handleProvider } from '../lib/id-rules.js';
import { idsValid } from './checked-ids.js';
import type { GcKindRunner, GcItem } from './gc-kind.js';

export const orphansKind: GcKindRunner = {
  async plan(ctx) {
    const { services, now } = ctx;
    const items: GcItem[] = [];
    for (const provider of services.providers.all()) {
      for (const sandbox of await provider.list(ctx.signal)) {
        // A listing is read from disk or the provider: the handle must be one of its own workspace's.
        if (!idsValid(ctx, { workspaceId: sandbox.workspaceId, handle: sandbox.handle })) continue;
        const address = await services.addresses.get(sandbox.workspaceId);
        if (address?.handle === sandbox.handle) continue;
        const runtime = await services.runtime.get(sandbox.workspaceId);
        if (runtime?.state === 'provisioning' && runtime.handle === sandbox.handle) continue;
        if (sandbox.createdAt !== undefined && now - sandbox.createdAt < services.config.deadlines.provisionMs) continue;
        items.push({ id: sandbox.handle, workspaceId: sandbox.workspaceId, description: `${provider.name} sandbox not in the address store (g${sandbox.generation}, ${sandbox.state})`, bytes: 0 });
        if (items.length >= ctx.limit) return items;
      }
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    for (const item of planned) {
      // Re-check right before destroying: it may have been published meanwhile.
      if (!idsValid(ctx, { workspaceId: item.workspaceId ?? null, handle: item.id })) continue;
      const address = item.workspaceId ? await ctx.services.addresses.get(item.workspaceId) : null;
      if (address?.handle === item.id) continue;
      const provider = ctx.services.providers.get(handleProvider(item.id)!);
      await provider.destroy(item.id, ctx.signal);
      out.push(item);
    }
    return out;
  },
};
