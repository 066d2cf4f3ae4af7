/**
 * The persist intent: the merged, not-yet-covered persist requests of one workspace.
 *
 * BullMQ deduplication drops an add that collides with a waiting job and keeps only the last
 * payload of one that collides with an active job. Either would lose a `delete: true` request
 * merged with a later `delete: false` one. So every request is merged here (atomically):
 * `delete` and `force` are sticky until a run covers them, the newest `reason`/`turnId` win, the
 * generation is the highest seen, and every request gets a sequence number. A run reads the
 * intent, persists, and then clears exactly what it covered; anything newer stays for the
 * follow-up job that `keepLastIfActive` guarantees.
 *
 * Two ways in, one merge: the fleet's client merges a request in the same MULTI/EXEC as its job
 * add (`queueMerge`, keyed by a request id the job carries); the persist worker merges the
 * request of any other job itself (`claim`, keyed by the job) before it reads the intent. So a
 * request of any producer is in the intent before a run that must cover it reads it (G5).
 */
import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { perWorkspace } from './buckets.js';
import type { PersistReason } from '../queues/persist.js';
import { CLAIM, COMPLETE, FAIL, MERGE } from './persist-intent-scripts.js';

export interface PersistIntent {
  readonly seq: number;
  readonly delete: boolean;
  /** Sequence number of the newest delete request (0 if none pending). */
  readonly deleteSeq: number;
  readonly force: boolean;
  /**
   * An upload-only request other than a checkpoint's is pending: the run keeps what the live tree
   * lacks. Without it (and without `delete`), only checkpoints are pending: the run takes the
   * live tree exactly when a reconcile is safe (see `PersistRequest.exact` in persist-workspace.ts).
   */
  readonly keep: boolean;
  readonly reason: PersistReason;
  readonly turnId: string | null;
  readonly generation: number;
}

export interface PersistRequest {
  readonly delete: boolean;
  readonly force: boolean;
  readonly reason: PersistReason;
  readonly turnId?: string | undefined;
  readonly generation: number;
}

/** A BullMQ job, by queue (`persist@host`) and id: what a worker-side claim is keyed by. */
export interface PersistJobRef {
  readonly queue: string;
  readonly jobId: string;
}

/**
 * How long a worker's claim of a job is remembered (it is dropped when the job finishes). It
 * must outlive one job's attempts, backoff and stalls; an expired claim only costs one extra run.
 */
export const PERSIST_CLAIM_TTL_MS = 24 * 60 * 60_000;

// ARGV of a merge: delete, force, reason, turnId, generation.
const mergeArgs = (request: PersistRequest) => [request.delete ? 1 : 0, request.force ? 1 : 0, request.reason, request.turnId ?? '', request.generation];

// Hash fields → intent (null when there is no pending request).
function toIntent(hash: Record<string, string>): PersistIntent | null {
  if (!hash.seq) return null;
  return {
    seq: Number(hash.seq),
    delete: hash.delete === '1',
    deleteSeq: Number(hash.deleteSeq ?? 0),
    force: hash.force === '1',
    keep: hash.keep === '1',
    reason: (hash.reason as PersistReason) ?? 'manual',
    turnId: hash.turnId ? hash.turnId : null,
    generation: Number(hash.generation ?? 0),
  };
}

/** Outcome of the newest persist runs, as recorded for waiters. */
export interface PersistStatus {
  readonly completedSeq: number;
  /** Epoch ms of the newest successful run (changed or not); 0 if none. */
  readonly completedAt: number;
  /** Epoch ms when the newest successful run began reading the live tree (what the archive holds at least); 0 if unknown. */
  readonly capturedAt: number;
  readonly result: unknown;
  readonly failedSeq: number;
  readonly failedReason: string | null;
  /**
   * The newest sequence number a run of each generation covered (the newest 16 generations;
   * empty when the runs were of a fleet that did not record it).
   */
  readonly completedByGeneration: ReadonlyMap<number, number>;
}

export class PersistIntentStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** Merges a request of the fleet's client (once per `requestId`); returns its sequence number. */
  async merge(workspaceId: string, request: PersistRequest & { readonly requestId?: string }): Promise<number> {
    return Number(await MERGE.run(this.redis, this.#intentKeys(workspaceId), [...mergeArgs(request), request.requestId ?? randomUUID()]));
  }

  /**
   * Queues the merge of `request` on a MULTI, so that Redis admits or refuses it together with
   * the job add queued next to it. EVAL with the source: a NOSCRIPT inside EXEC could not be retried.
   * Its reply is the request's sequence number.
   */
  queueMerge(multi: ChainableCommander, workspaceId: string, request: PersistRequest & { readonly requestId: string }): void {
    multi.eval(MERGE.lua, 2, ...this.#intentKeys(workspaceId), ...mergeArgs(request), request.requestId);
  }

  /** The sequence number of a pending request of the fleet's client; `null` once covered (or unknown). */
  async requestSeq(workspaceId: string, requestId: string): Promise<number | null> {
    const seq = await this.redis.hget(this.keys.persistIntent(workspaceId), `r:${requestId}`);
    return seq === null ? null : Number(seq);
  }

  /** The sequence number a worker merged for `job` (`null` if it never claimed, or finished). */
  async claimedSeq(workspaceId: string, job: PersistJobRef): Promise<number | null> {
    const seq = await this.redis.get(this.keys.persistClaim(workspaceId, job.queue, job.jobId));
    return seq === null ? null : Number(seq);
  }

  /**
   * Merges the request of a job its producer did not merge, once per job (a re-run gets the
   * first sequence number back). `merged` is false when the job had claimed before.
   */
  async claim(workspaceId: string, job: PersistJobRef, request: PersistRequest): Promise<{ seq: number; merged: boolean }> {
    const [seq, merged] = (await CLAIM.run(this.redis, [...this.#intentKeys(workspaceId), this.keys.persistClaim(workspaceId, job.queue, job.jobId)], [...mergeArgs(request), PERSIST_CLAIM_TTL_MS])) as [number, number];
    return { seq: Number(seq), merged: merged === 1 };
  }

  /** The pending intent (not consumed: a crashed run leaves it for the re-run). */
  async read(workspaceId: string): Promise<PersistIntent | null> {
    return toIntent(await this.redis.hgetall(this.keys.persistIntent(workspaceId)));
  }

  /**
   * Marks requests up to `coveredSeq` done and publishes the result; `job` (the finishing job)
   * drops its claim; `capturedAt` (epoch ms) is when the run began reading the live tree: the
   * archive holds the live tree of at least that moment (the persist lag counts from it);
   * `generation` is the incarnation whose tree the run persisted (waiters of requests made for an
   * older one learn that theirs was not). Returns true if nothing newer is pending.
   */
  async complete(workspaceId: string, coveredSeq: number, result: unknown, job?: PersistJobRef, capturedAt = 0, generation?: number): Promise<boolean> {
    const done = await COMPLETE.run(this.redis, [...this.#intentKeys(workspaceId), this.#claimKey(workspaceId, job)], [coveredSeq, JSON.stringify(result), capturedAt, generation ?? '']);
    return done === 1;
  }

  /**
   * Records a final failure for waiters of requests up to `attemptedSeq`. A permanent failure
   * (`consume`) also clears those requests: retrying them can never succeed.
   */
  async fail(workspaceId: string, attemptedSeq: number, failedReason: string, consume: boolean, job?: PersistJobRef): Promise<void> {
    await FAIL.run(this.redis, [...this.#intentKeys(workspaceId), this.#claimKey(workspaceId, job)], [attemptedSeq, failedReason, consume ? 1 : 0]);
  }

  // Intent and status hash of a workspace (KEYS[1], KEYS[2] of every script).
  #intentKeys(workspaceId: string): [string, string] {
    return [this.keys.persistIntent(workspaceId), this.keys.persistStatus(workspaceId)];
  }

  // The claim key of a job; without a job, one that never exists (DEL of it is a no-op).
  #claimKey(workspaceId: string, job: PersistJobRef | undefined): string {
    return job ? this.keys.persistClaim(workspaceId, job.queue, job.jobId) : this.keys.persistClaim(workspaceId, '-', '-');
  }

  /** `completedAt` and `capturedAt` of each workspace's status (0 when unknown), in the order given: one pipeline. */
  async caughtUpOf(workspaceIds: readonly string[]): Promise<Pick<PersistStatus, 'completedAt' | 'capturedAt'>[]> {
    const replies = await perWorkspace<(string | null)[]>(this.redis, this.keys, workspaceIds, (pipeline, ws) => pipeline.hmget(this.keys.persistStatus(ws), 'completedAt', 'capturedAt'));
    return replies.map(([completedAt, capturedAt]) => ({ completedAt: Number(completedAt ?? 0), capturedAt: Number(capturedAt ?? 0) }));
  }

  /** The outcome of the newest runs. */
  async status(workspaceId: string): Promise<PersistStatus> {
    const hash = await this.redis.hgetall(this.keys.persistStatus(workspaceId));
    return {
      completedSeq: Number(hash.completedSeq ?? 0),
      completedAt: Number(hash.completedAt ?? 0),
      capturedAt: Number(hash.capturedAt ?? 0),
      result: hash.result ? (JSON.parse(hash.result) as unknown) : null,
      failedSeq: Number(hash.failedSeq ?? 0),
      failedReason: hash.failedReason ?? null,
      completedByGeneration: new Map(
        Object.entries(hash)
          .filter(([field]) => /^c:\d+$/.test(field))
          .map(([field, seq]) => [Number(field.slice(2)), Number(seq)]),
      ),
    };
  }
}
