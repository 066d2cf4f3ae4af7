/**
 * `persist@{host}` processor. First it makes sure the job's own request is in the workspace's
 * persist intent: the fleet's client merged it when it added the job (the job carries its
 * `requestId`); for a job of any other producer the worker merges it now, once per job (G5 for
 * every producer, see persist-intent.ts). Then, holding the workspace's persist lock, it reads
 * the merged intent (falling back to the job's own request, settled, when a run already covered it), runs
 * the persist protocol, and clears exactly the requests it covered. Permanent failures consume
 * the requests they attempted and are reported to waiters; an idle-reap request stops the
 * sandbox afterwards (even if the flush failed: stopping keeps the live files).
 */
import { encodeFailure } from '../../errors/failure-codec.js';
import { rollbackWorkspace, type RollbackDeps } from '../../persist/rollback-workspace.js';
import { isFleetError } from '../../errors/fleet-error.js';
import { RedisUnavailableError } from '../../errors/redis-unavailable-error.js';
import { persistWorkspace, type PersistDeps, type PersistRequest } from '../../persist/persist-workspace.js';
import type { PersistPayload, PersistResult, RollbackResult } from '../../queues/persist.js';
import type { Config } from '../../config.js';
import type { SingleFlight } from '../../locks/single-flight.js';
import type { AddressStore } from '../../state/address-store.js';
import type { PersistIntentStore, PersistJobRef } from '../../state/persist-intent.js';
import { withSignal, type Processor } from '../../jobs/processor-context.js';
import { stopWorkspace, type StopDeps } from './stop-workspace.js';
import { recordPersist, type RecordPersistDeps } from '../../metrics/record-persist.js';
import { anySignal } from '../../lib/any-signal.js';
import { foreignHome, handOffPersist, type HandOffDeps, type PersistHandOff } from './hand-off-persist.js';

/**
 * The sequence number of the job's own request, merging it first when its producer did not:
 * 0 when a run already covered it (the job then runs its own request once more).
 */
export async function ownRequestSeq(intents: PersistIntentStore, payload: PersistPayload, job: PersistJobRef): Promise<number> {
  if (payload.requestId !== undefined) return (await intents.requestSeq(payload.workspaceId, payload.requestId)) ?? 0;
  // Enqueued by a fleet client from before request ids: merged by it, with this number.
  if (payload.requestSeq !== undefined) return payload.requestSeq;
  return (await intents.claim(payload.workspaceId, job, payload)).seq;
}

/**
 * The request a job runs when a run already covered its own (or its record is gone): once more,
 * as an exact persist that settles (two walks or listings that agree, else nothing committed),
 * never a single-walk reconcile. Its agent's turn may already be acknowledged and the agent
 * writing again: a turn end walked once then can mix two moments (loss-window run X).
 */
export function coveredRequest(payload: PersistPayload, ownSeq: number): PersistRequest {
  const exact = payload.delete || payload.reason === 'checkpoint';
  return { workspaceId: payload.workspaceId, generation: payload.generation, delete: false, exact, force: payload.force, reason: payload.reason, turnId: payload.turnId ?? null, coveredSeq: ownSeq };
}

export interface PersistProcessorDeps extends RecordPersistDeps, StopDeps, HandOffDeps {
  readonly intents: PersistIntentStore;
  readonly addresses: Pick<AddressStore, 'get' | 'lastActivity' | 'touch'>;
  readonly config: Pick<Config, 'deadlines' | 'idleTtlMs'>;
  readonly singleFlight: Pick<SingleFlight, 'using'>;
  /** Where Redis is (named by a failure that lost it). */
  readonly redisAddress: string;
  /** The persist protocol's own deps, and a rollback's. */
  readonly persist: PersistDeps;
  readonly rollback: RollbackDeps;
}

export function persistProcessor(deps: PersistProcessorDeps): Processor<PersistPayload, PersistResult | RollbackResult | PersistHandOff> {
  const { intents, config } = deps;
  const exclusive = <T>(workspaceId: string, fn: (signal: AbortSignal) => Promise<T>) =>
    // One writer per workspace archive at a time (efficiency); the fence and the head CAS carry correctness.
    deps.singleFlight.using(`persist:${workspaceId}`, { maxHoldMs: config.deadlines.persistMs }, (lock) => fn(lock.signal));
  return async (payload, ctx) => {
    if (payload.rollbackTo) {
      const revision = payload.rollbackTo;
      return exclusive(payload.workspaceId, (lockSignal) =>
        rollbackWorkspace(deps.rollback, { workspaceId: payload.workspaceId, generation: payload.generation, revision }, withSignal(ctx, anySignal([ctx.signal, lockSignal]))),
      );
    }
    const job: PersistJobRef = { queue: ctx.queue, jobId: ctx.jobId };
    const ownSeq = await ownRequestSeq(intents, payload, job);
    // Read under the lock: a run that finished while this job waited for it has cleared what it covered.
    let request: PersistRequest | undefined;
    let capturedAt = 0;
    let handedOff = false;
    try {
      const outcome = await exclusive(payload.workspaceId, async (lockSignal) => {
        const intent = await intents.read(payload.workspaceId);
        request = intent
          ? { workspaceId: payload.workspaceId, generation: intent.generation, delete: intent.delete, exact: !intent.delete && !intent.keep && intent.reason === 'checkpoint', force: intent.force, reason: intent.reason, turnId: intent.turnId, coveredSeq: intent.seq }
          : coveredRequest(payload, ownSeq);
        ctx.logger.debug({ request, ownSeq }, 'persist request');
        // The intent may be of an incarnation another host serves (it carries the newest generation merged).
        const home = foreignHome(await deps.addresses.get(payload.workspaceId), request, ctx.queue);
        if (home !== null) return handOffPersist(deps, home, request);
        // Writes after this moment may miss the revision: the persist lag counts from here, not from completion.
        capturedAt = Date.now();
        return persistWorkspace(
          deps.persist,
          request,
          withSignal(ctx, anySignal([ctx.signal, lockSignal])),
        );
      });
      if ('handedOffTo' in outcome) {
        handedOff = true;
        ctx.logger.info({ handedOffTo: outcome.handedOffTo, generation: outcome.generation }, 'persist handed to the queue of the host that serves the workspace');
        return outcome;
      }
      const result = outcome;
      const covered = request!;
      await recordPersist(deps, covered.reason, result);
      await intents.complete(payload.workspaceId, covered.coveredSeq, result, job, capturedAt, covered.generation);
      if (covered.reason === 'turn-end') await deps.addresses.touch(payload.workspaceId);
      return result;
    } catch (error) {
      const permanent = isFleetError(error) && !error.retryable;
      if (permanent || ctx.attempt >= ctx.maxAttempts) {
        const failure = RedisUnavailableError.from(error, deps.redisAddress) ?? error;
        await intents.fail(payload.workspaceId, request?.coveredSeq ?? ownSeq, encodeFailure(failure), permanent, job);
      }
      throw error;
    } finally {
      const reason = request?.reason ?? payload.reason;
      if (reason === 'idle-reap' && !handedOff) await stopWorkspace(deps, payload.workspaceId, request?.generation ?? payload.generation, ctx.signal, ctx.logger);
    }
  };
}
