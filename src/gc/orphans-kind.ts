/**
 * Orphan sandboxes: incarnations that exist at a provider but are not the address store's for
 * their workspace (losers of a race, replaced incarnations whose destroy failed, leftovers of a
 * crash between create and publish). A sandbox is destroyed only when all of these hold:
 *
 * - no creator holds a lease on it (pending-create-store.ts: written before the provider call by
 *   provisioning and bakes, so a sandbox between create and publish or a live bake's seed is safe);
 * - its workspace's runtime record is not provisioning that generation (younger than the deadline);
 * - the provider proves it is older than the provision deadline: a sandbox whose creation time
 *   is unknown is never destroyed;
 * - no provisioner holds the workspace (its `provision:{ws}` lock is taken around the re-check
 *   and the destroy: under a durable Vercel name, a replacement between them would be what the
 *   destroy hits).
 */
import { LockUnavailableError } from '../locks/lock-errors.js';
import { handleProvider } from '../providers/id-rules.js';
import type { SandboxInfo } from '../providers/sandbox-provider.js';
import { idsValid } from './checked-ids.js';
import type { GcContext, GcKindRunner, GcItem } from './gc-kind.js';

// Why a sandbox that the address store does not name must stay (null: it may go).
async function keepReason(ctx: GcContext, sandbox: SandboxInfo): Promise<string | null> {
  const { deps, now } = ctx;
  const graceMs = deps.config.deadlines.provisionMs;
  if (await deps.pendingCreates.isPending(sandbox.workspaceId, sandbox.generation, now)) return 'being created';
  const runtime = await deps.runtime.get(sandbox.workspaceId);
  if (runtime?.state === 'provisioning' && runtime.generation === sandbox.generation && now - runtime.updatedAt < graceMs) return 'being provisioned';
  if (sandbox.createdAt === undefined) return 'creation time unknown';
  if (now - sandbox.createdAt < graceMs) return 'younger than the provision deadline';
  return null;
}

export const orphansKind: GcKindRunner = {
  async plan(ctx) {
    const { deps } = ctx;
    const items: GcItem[] = [];
    await deps.pendingCreates.prune(ctx.now);
    for (const provider of deps.providers.all()) {
      for (const sandbox of await provider.list(ctx.signal)) {
        // A listing is read from disk or the provider: the handle must be one of its own workspace's.
        if (!idsValid(ctx, { workspaceId: sandbox.workspaceId, handle: sandbox.handle })) continue;
        const address = await deps.addresses.get(sandbox.workspaceId);
        if (address?.handle === sandbox.handle) continue;
        if ((await keepReason(ctx, sandbox)) !== null) continue;
        items.push({ id: sandbox.handle, workspaceId: sandbox.workspaceId, description: `${provider.name} sandbox not in the address store (g${sandbox.generation}, ${sandbox.state})`, bytes: 0 });
        if (items.length >= ctx.limit) return items;
      }
    }
    return items;
  },
  async apply(ctx, planned) {
    const out: GcItem[] = [];
    for (const item of planned) {
      if (!idsValid(ctx, { workspaceId: item.workspaceId ?? null, handle: item.id }) || !item.workspaceId) continue;
      const workspaceId = item.workspaceId;
      try {
        // Under the workspace's provisioning lock: a provisioner cannot replace the sandbox under
        // its durable name (Vercel) between the re-check below and the destroy.
        const destroyed = await ctx.deps.singleFlight.using(`provision:${workspaceId}`, async () => {
          // Re-check right before destroying: it may have been published, or a creator may hold it, meanwhile.
          const address = await ctx.deps.addresses.get(workspaceId);
          if (address?.handle === item.id) return false;
          const provider = ctx.deps.providers.get(handleProvider(item.id)!);
          const sandbox = await provider.get(item.id, ctx.signal);
          if (!sandbox) return false;
          if ((await keepReason({ ...ctx, now: Date.now() }, sandbox)) !== null) return false;
          await provider.destroy(item.id, ctx.signal);
          return true;
        });
        if (destroyed) out.push(item);
      } catch (error) {
        // The workspace is being provisioned: its orphans wait for the next run.
        if (error instanceof LockUnavailableError) continue;
        throw error;
      }
    }
    return out;
  },
};
