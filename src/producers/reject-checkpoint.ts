/**
 * Rejecting a checkpoint (issue 19.11, seed 003's `rollback_current_checkpoint`): a checkpoint is
 * attached before the turn it belongs to is settled (a turn-end persist, or an upload-only
 * checkpoint during the turn), so when that turn fails the app rejects it. The workspace's head
 * falls back to the previous attached checkpoint; the rejected revision becomes unattached (GC
 * collects it later, nothing is deleted inline). Fenced on the generation (a stale one is
 * `StaleGeneration`), a no-op when the head is no longer that checkpoint (something newer
 * decided), and it always answers what the workspace points at now. The live tree is not
 * touched: roll it back or re-provision if the failed turn's files must go too.
 */
import { z } from 'zod';
import type { ArchiveStore } from '../archive/archive-store.js';
import { CheckpointNotFoundError, type Checkpoint, type CheckpointStore } from '../state/checkpoint-store.js';
import { Generation, WorkspaceId, parsePayload } from '../queues/payload.js';
import { RevisionId } from '../queues/persist.js';

export const RejectCheckpointRequest = z
  .object({
    workspaceId: WorkspaceId,
    /** The generation the checkpoint was attached under (the workspace's live one). */
    generation: Generation,
    /** The checkpoint to reject, by id ... */
    checkpointId: z.uuid({ error: 'must be a checkpoint id (a UUID)' }).optional(),
    /** ... or by the revision a persist answered. */
    revision: RevisionId.optional(),
  })
  .strict()
  .refine((r) => (r.checkpointId === undefined) !== (r.revision === undefined), { error: 'give exactly one of checkpointId and revision', path: ['checkpointId'] });
export type RejectCheckpointRequest = z.infer<typeof RejectCheckpointRequest>;
export type RejectCheckpointInput = z.input<typeof RejectCheckpointRequest>;

/** A checkpoint as the app sees it. */
export interface CheckpointView {
  readonly checkpointId: string;
  readonly revision: string;
  readonly kind: string;
  readonly generation: number;
  readonly reason: string;
  readonly turnId: string | null;
  readonly attachedAt: number | null;
}

export interface RejectCheckpointResult {
  readonly workspaceId: string;
  /** The checkpoint named by the request. */
  readonly checkpointId: string;
  /** True when it was the head and is now rejected; false when something newer already decided. */
  readonly rejected: boolean;
  /** What the workspace points at now (null: no earlier committed revision). */
  readonly current: CheckpointView | null;
}

export interface RejectCheckpointDeps {
  readonly checkpoints: CheckpointStore;
  /** When given, the archive's `current` link follows the new head at once (else the next persist repairs it). */
  readonly archive?: ArchiveStore;
}

const view = (c: Checkpoint): CheckpointView => ({
  checkpointId: c.id,
  revision: c.workspaceRevision,
  kind: c.kind,
  generation: c.generation,
  reason: c.reason,
  turnId: c.sourceTurnId,
  attachedAt: c.attachedAt,
});

export async function rejectCheckpoint(deps: RejectCheckpointDeps, input: RejectCheckpointInput): Promise<RejectCheckpointResult> {
  const request = parsePayload('reject checkpoint request', RejectCheckpointRequest, input);
  const { workspaceId } = request;
  const checkpoint = request.checkpointId !== undefined ? await deps.checkpoints.get(workspaceId, request.checkpointId) : await deps.checkpoints.byRevision(workspaceId, 'portable_workspace', request.revision!);
  if (!checkpoint || checkpoint.workspaceId !== workspaceId) {
    throw new CheckpointNotFoundError(`workspace ${workspaceId} has no checkpoint ${request.checkpointId ?? request.revision}`, { context: { workspaceId, checkpointId: request.checkpointId, revision: request.revision } });
  }
  const { rejected, current } = await deps.checkpoints.rejectCurrent(workspaceId, checkpoint.id, request.generation);
  if (rejected && deps.archive && current?.kind === 'portable_workspace' && (await deps.archive.readManifest(workspaceId, current.workspaceRevision))) {
    await deps.archive.flipCurrent(workspaceId, current.workspaceRevision);
  }
  return { workspaceId, checkpointId: checkpoint.id, rejected, current: current ? view(current) : null };
}
