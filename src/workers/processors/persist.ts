/**
 * `persist@{host}` processor: reads the merged persist intent (falling back to the payload for a
 * job enqueued without one), runs the persist protocol, then clears exactly the requests it
 * covered. Permanent failures consume the requests they attempted and are reported to waiters;
 * an idle-reap request stops the sandbox afterwards (even if the flush failed: stopping keeps
 * the live files).
 */
import { encodeFailure } from '../../errors/failure-codec.js';
import { rollbackWorkspace } from '../../persist/rollback-workspace.js';
import { isFleetError } from '../../errors/fleet-error.js';
import { persistWorkspace, type PersistRequest } from '../../persist/persist-workspace.js';
import type { PersistPayload, PersistResult, RollbackResult } from '../../queues/persist.js';
import type { FleetServices } from '../../runtime/services.js';
import type { Processor } from '../processor-context.js';
import { stopWorkspace } from './stop-workspace.js';
import { recordPersist } from '../../metrics/record-persist.js';

export function persistProcessor(services: FleetServices): Processor<PersistPayload, PersistResult | RollbackResult> {
  const { intents, config } = services;
  const exclusive = <T>(workspaceId: string, fn: (signal: AbortSignal) => Promise<T>) =>
    // One writer per workspace archive at a time (efficiency); the fence and the head CAS carry correctness.
    services.singleFlight.using(`persist:${workspaceId}`, { maxHoldMs: config.deadlines.persistMs }, (lock) => fn(lock.signal));
  return async (payload, ctx) => {
    if (payload.rollbackTo) {
      const revision = payload.rollbackTo;
      return exclusive(payload.workspaceId, (lockSignal) =>
        rollbackWorkspace(services, { workspaceId: payload.workspaceId, generation: payload.generation, revision }, { ...ctx, signal: AbortSignal.any([ctx.signal, lockSignal]) }),
      );
    }
    const intent = await intents.read(payload.workspaceId);
    const request: PersistRequest = intent
      ? {
          workspaceId: payload.workspaceId,
          generation: intent.generation,
          delete: intent.delete,
          force: intent.force,
          reason: intent.reason,
          turnId: intent.turnId,
          coveredSeq: intent.seq,
        }
      : {
          workspaceId: payload.workspaceId,
          generation: payload.generation,
          delete: payload.delete,
          force: payload.force,
          reason: payload.reason,
          turnId: payload.turnId ?? null,
          coveredSeq: payload.requestSeq ?? 0,
        };
    ctx.logger.debug({ request }, 'persist request');
    try {
      const result = await exclusive(payload.workspaceId, (lockSignal) => persistWorkspace(
        {
          addresses: services.addresses,
          checkpoints: services.checkpoints,
          archive: services.archive,
          providerFor: services.providerFor,
          shrinkGuardPct: config.retention.shrinkGuardPct,
          systemPath: config.systemPath,
          treeLimits: config.treeLimits,
        },
        request,
        { ...ctx, signal: AbortSignal.any([ctx.signal, lockSignal]) },
      ));
      await recordPersist(services, request.reason, result);
      await intents.complete(payload.workspaceId, request.coveredSeq, result);
      if (request.reason === 'turn-end') await services.addresses.touch(payload.workspaceId);
      return result;
    } catch (error) {
      const permanent = isFleetError(error) && !error.retryable;
      if (permanent || ctx.attempt >= ctx.maxAttempts) {
        await intents.fail(payload.workspaceId, request.coveredSeq, encodeFailure(error), permanent);
      }
      throw error;
    } finally {
      if (request.reason === 'idle-reap') await stopWorkspace(services, payload.workspaceId, request.generation, ctx.signal, ctx.logger);
    }
  };
}
