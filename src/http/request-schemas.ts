/**
 * Request schemas of the HTTP API. Each is the queue's own payload schema (so the HTTP edge and
 * the workers refuse the same things); the workspace id comes from the path and is merged into
 * the body before parsing. `*Body` variants (without `workspaceId`) document the bodies.
 */
import { z } from 'zod';
import { PersistPayload, ProvisionPayload, RollbackInput, Generation, RevisionId, WorkspaceId } from '../queues/index.js';
import { TurnRequest } from '../producers/turns.js';
import { ExecArgs } from '../hostops/host-op-args.js';

/** Exec over HTTP: the hostops exec arguments (same rules), the deadline optional. */
export const ExecRequest = ExecArgs.extend({ workspaceId: WorkspaceId, timeoutMs: ExecArgs.shape.timeoutMs.optional() }).strict();

/** Persist over HTTP: the queue payload minus fields only the producer sets. */
export const PersistRequest = PersistPayload.omit({ requestId: true, requestSeq: true, rollbackTo: true });

export const CHECKPOINT_ACTIONS = ['start', 'stop'] as const;

/** Start or stop the checkpoint scheduler of a workspace. */
export const CheckpointsRequest = z
  .object({
    workspaceId: WorkspaceId,
    action: z.enum(CHECKPOINT_ACTIONS, { error: 'must be "start" or "stop"' }),
    /** Generation the ticks carry (default: the live incarnation's). */
    generation: Generation.optional(),
    /** Tick interval (default FLEET_CHECKPOINT_INTERVAL_MS). */
    everyMs: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1_000, { error: 'must be >= 1000' }).max(86_400_000, { error: 'must be <= 86400000' }).optional(),
  })
  .strict();

export const TURN_ACTIONS = ['open', 'close'] as const;

/** Open or close a turn of a workspace (the workspace is not idle while a turn is open). */
export const TurnsRequest = TurnRequest.extend({ action: z.enum(TURN_ACTIONS, { error: 'must be "open" or "close"' }) }).strict();

export const PathParams = z.object({ workspaceId: WorkspaceId }).strict();

export const ProvisionBody = ProvisionPayload.omit({ workspaceId: true });
export const PersistBody = PersistRequest.omit({ workspaceId: true });
export const CheckpointsBody = CheckpointsRequest.omit({ workspaceId: true });
export const RollbackBody = RollbackInput.omit({ workspaceId: true });
export const TurnsBody = TurnsRequest.omit({ workspaceId: true });
/** Documents the reject body (the validating schema adds the path's workspaceId). */
export const RejectCheckpointBody = z
  .object({
    generation: Generation,
    checkpointId: z.uuid().optional(),
    revision: RevisionId.optional(),
  })
  .strict();
export const ExecBody = ExecRequest.omit({ workspaceId: true });
