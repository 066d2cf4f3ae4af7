/**
 * `checkpoint@{hostId}`: the job scheduler tick of an active workspace. Its processor enqueues an
 * upload-only persist request through the persist queue's deduplication, so checkpoints coalesce
 * with turn-end persists and never stack or overlap them.
 */
import { z } from 'zod';
import { RETENTION } from './job-options.js';
import { Generation, WorkspaceId } from './payload.js';

export const CHECKPOINT = 'checkpoint';

export const CheckpointPayload = z
  .object({
    workspaceId: WorkspaceId,
    generation: Generation,
  })
  .strict();
export type CheckpointPayload = z.infer<typeof CheckpointPayload>;

/** One attempt: the next tick is the retry. */
export const checkpointJobOptions = { attempts: 1, ...RETENTION, removeOnComplete: { age: 600, count: 200 } };

/** One scheduler per workspace. */
export const checkpointSchedulerId = (workspaceId: string) => `checkpoint:${workspaceId}`;
