/**
 * What the stores and the archive know about a workspace's durable state, for the restore plan.
 * A workspace is *known* once it was ever provisioned (an address was published, even one whose
 * sandbox is gone now) or ever had durable state (checkpoints, archive revisions, a migration):
 * a known workspace is restored from its own history or refused, never recreated from the base.
 */
import type { FleetServices } from '../runtime/services.js';
import type { Address } from '../state/address-store.js';

export interface DurableFacts {
  readonly revision: string | null;
  readonly nativeSnapshot: string | null;
  readonly hadState: boolean;
}

/** The revision a restore would start from: the attached head, else what `current` links to. */
export async function headRevision(services: Pick<FleetServices, 'checkpoints' | 'archive'>, workspaceId: string): Promise<string | null> {
  const head = await services.checkpoints.current(workspaceId);
  return head?.kind === 'portable_workspace' ? head.workspaceRevision : await services.archive.current(workspaceId);
}

export async function durableFacts(services: Pick<FleetServices, 'checkpoints' | 'archive' | 'redis' | 'keys'>, workspaceId: string, address: Address | null): Promise<DurableFacts> {
  const revision = await headRevision(services, workspaceId);
  const history = await services.checkpoints.history(workspaceId, 200);
  const native = history.find((c) => c.kind === 'provider_native');
  const revisions = await services.archive.revisions(workspaceId);
  const migrated = await services.redis.hexists(services.keys.migrated(), workspaceId);
  return {
    revision: revision && revisions.includes(revision) ? revision : null,
    nativeSnapshot: native?.workspaceRevision ?? null,
    // An address is published only after a complete restore; it stays until a reset.
    hadState: address !== null || history.length > 0 || revisions.length > 0 || migrated === 1,
  };
}
