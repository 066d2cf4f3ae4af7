/**
 * The events a job's outcome reports (state/fleet-event.ts), from its queue, payload and result
 * (pure). A provision that only found the live sandbox again and a checkpoint that found nothing
 * new are not events: they change nothing an app acts on. A turn's persist is one even when
 * unchanged (the app learns its turn is safe).
 */
import { decodeFailure } from '../errors/failure-codec.js';
import type { PersistResult, ProvisionResult, QueueName, RollbackResult } from '../queues/index.js';
import type { FleetEventInput } from '../state/fleet-event.js';

// The workspace a payload names, when it names one.
function workspaceOf(data: unknown): string | null {
  return typeof data === 'object' && data !== null && 'workspaceId' in data && typeof data.workspaceId === 'string' ? data.workspaceId : null;
}

// A string field of a payload.
function field(data: unknown, name: string): string | null {
  const value = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : null;
}

/** The event of a completed job; null when it reports nothing new. */
export function completionEvent(queue: QueueName, jobName: string, data: unknown, result: unknown): FleetEventInput | null {
  if (typeof result !== 'object' || result === null) return null;
  if (queue === 'provision') {
    const r = result as ProvisionResult;
    if (r.outcome === 'reused') return null;
    return { type: 'provisioned', workspaceId: r.workspaceId, generation: r.generation, handle: r.handle, hostId: r.hostId, provider: r.provider, outcome: r.outcome, source: r.source };
  }
  // A checkpoint tick only enqueues a persist (reason `checkpoint`): that persist is the event.
  if (queue !== 'persist' || typeof (result as { workspaceId?: unknown }).workspaceId !== 'string') return null;
  if (jobName === 'rollback') {
    const r = result as RollbackResult;
    return { type: 'persisted', workspaceId: r.workspaceId, generation: r.generation, revision: r.revision, reason: 'rollback', turnId: null, files: r.files, bytes: 0, changedFiles: 0, deletedFiles: 0 };
  }
  const r = result as PersistResult;
  const reason = field(data, 'reason') ?? 'manual';
  if (r.revision === null || (reason === 'checkpoint' && r.unchanged)) return null;
  return {
    type: 'persisted',
    workspaceId: r.workspaceId,
    generation: r.generation,
    revision: r.revision,
    reason,
    turnId: field(data, 'turnId'),
    files: r.files,
    bytes: r.bytes,
    changedFiles: r.changedFiles,
    deletedFiles: r.deletedFiles,
  };
}

/** The event of a job that failed for good (its failure decoded like any waiter's). */
export function failureEvent(queue: string, jobId: string, data: unknown, failedReason: string): FleetEventInput {
  const error = decodeFailure(queue, jobId, failedReason);
  return {
    type: 'failed',
    workspaceId: workspaceOf(data),
    queue,
    jobId,
    code: error.code,
    message: error.message,
    retryable: error.retryable,
  };
}
