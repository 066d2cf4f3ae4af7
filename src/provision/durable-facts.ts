/**
 * What the stores and the archive know about a workspace's durable state, for the restore plan.
 * A workspace is *known* once it was ever provisioned (an address was published, even one whose
 * sandbox is gone now) or ever had durable state (checkpoints, archive revisions, a migration):
 * a known workspace is restored from its own history or refused, never recreated from the base.
 */
import type { RedisClient } from '../redis.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { FleetKeys } from '../keys.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { Address } from '../state/address-store.js';
import { isMigrated } from '../state/migration-store.js';

/** Where a workspace's durable history is: the checkpoint records and the archive. */
export interface HeadRevisionDeps {
  readonly checkpoints: Pick<CheckpointStore, 'current'>;
  readonly archive: Pick<ArchiveStore, 'current'>;
}

export interface DurableFactsDeps {
  readonly checkpoints: Pick<CheckpointStore, 'current' | 'history'>;
  readonly archive: Pick<ArchiveStore, 'current' | 'revisions'>;
  readonly redis: Pick<RedisClient, 'hexists'>;
  readonly keys: Pick<FleetKeys, 'migrated' | 'bucket'>;
}

export interface DurableFacts {
  readonly revision: string | null;
  readonly nativeSnapshot: string | null;
  readonly hadState: boolean;
}

/** The revision a restore would start from: the attached head, else what `current` links to. */
export async function headRevision(deps: HeadRevisionDeps, workspaceId: string): Promise<string | null> {
  const head = await deps.checkpoints.current(workspaceId);
  return head?.kind === 'portable_workspace' ? head.workspaceRevision : await deps.archive.current(workspaceId);
}

export async function durableFacts(deps: DurableFactsDeps, workspaceId: string, address: Address | null): Promise<DurableFacts> {
  const revision = await headRevision(deps, workspaceId);
  const history = await deps.checkpoints.history(workspaceId, 200);
  const native = history.find((c) => c.kind === 'provider_native');
  const revisions = await deps.archive.revisions(workspaceId);
  const migrated = await isMigrated(deps.redis, deps.keys, workspaceId);
  return {
    revision: revision && revisions.includes(revision) ? revision : null,
    nativeSnapshot: native?.workspaceRevision ?? null,
    // An address is published only after a complete restore; it stays until a reset.
    hadState: address !== null || history.length > 0 || revisions.length > 0 || migrated,
  };
}
