/**
 * `checkpoint@{host}` processor: one scheduler tick. It enqueues a persist request (`delete:
 * false`, `reason: checkpoint`: the persist processor takes the tree exactly when only checkpoints
 * are pending, upload-only where a reconcile would be refused) through the persist queue's deduplication, so a checkpoint coalesces with a running or
 * pending persist of the same workspace instead of overlapping or stacking. A tick of a
 * replaced generation does nothing (its scheduler was re-upserted for the new one).
 */
import type { CheckpointPayload } from '../../queues/checkpoint.js';
import type { FleetClient } from '../../producers/fleet-client.js';
import type { SandboxProvider } from '../../providers/sandbox-provider.js';
import type { Address, AddressStore } from '../../state/address-store.js';
import type { Processor } from '../../jobs/processor-context.js';

export type CheckpointResult = { readonly skipped: 'stale-generation' | 'stopped' } | { readonly persistJobId: string; readonly seq: number };

export interface CheckpointDeps {
  readonly addresses: Pick<AddressStore, 'get'>;
  providerFor(address: Address): SandboxProvider;
  readonly client: Pick<FleetClient, 'persist'>;
}

export function checkpointProcessor(deps: CheckpointDeps): Processor<CheckpointPayload, CheckpointResult> {
  return async ({ workspaceId, generation }, ctx) => {
    const address = await deps.addresses.get(workspaceId);
    if (!address || address.generation !== generation) return { skipped: 'stale-generation' };
    const sandbox = await deps.providerFor(address).get(address.handle, ctx.signal);
    if (!sandbox || sandbox.state !== 'running') return { skipped: 'stopped' };
    const { jobId, seq } = await deps.client.persist({ workspaceId, generation, delete: false, reason: 'checkpoint' });
    return { persistJobId: jobId, seq };
  };
}
