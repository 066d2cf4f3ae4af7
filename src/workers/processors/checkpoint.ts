/**
 * `checkpoint@{host}` processor: one scheduler tick. It enqueues a persist request (`delete:
 * false`, `reason: checkpoint`: the persist processor takes the tree exactly when only checkpoints
 * are pending, upload-only where a reconcile would be refused) through the persist queue's deduplication, so a checkpoint coalesces with a running or
 * pending persist of the same workspace instead of overlapping or stacking. A tick of a
 * replaced generation does nothing (its scheduler was re-upserted for the new one).
 */
import type { CheckpointPayload } from '../../queues/checkpoint.js';
import type { FleetServices } from '../../app/services.js';
import type { Processor } from '../../jobs/processor-context.js';

export type CheckpointResult = { readonly skipped: 'stale-generation' | 'stopped' } | { readonly persistJobId: string; readonly seq: number };

export function checkpointProcessor(services: FleetServices): Processor<CheckpointPayload, CheckpointResult> {
  return async ({ workspaceId, generation }, ctx) => {
    const address = await services.addresses.get(workspaceId);
    if (!address || address.generation !== generation) return { skipped: 'stale-generation' };
    const sandbox = await services.providerFor(address).get(address.handle, ctx.signal);
    if (!sandbox || sandbox.state !== 'running') return { skipped: 'stopped' };
    const { jobId, seq } = await services.client.persist({ workspaceId, generation, delete: false, reason: 'checkpoint' });
    return { persistJobId: jobId, seq };
  };
}
