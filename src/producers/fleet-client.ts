/**
 * The TypeScript client of the fleet (DESIGN.md "Surfaces"): typed calls for every job, each
 * validated before anything reaches Redis. A bad call throws `PayloadInvalidError` and enqueues
 * nothing; `{ wait: true }` returns the job's result or throws its typed failure.
 *
 * Producers never import from `src/workers`.
 */
import type { RedisClient } from '../redis.js';
import type { JobsOptions, QueueEvents } from 'bullmq';
import type { Config } from '../config.js';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { WorkspaceNotFoundError } from '../errors/workspace-not-found-error.js';
import { fleetKeys, type FleetKeys } from '../keys.js';
import { createRedis, duplicateRedis, redisAddress, redisOptions, redisResolved } from '../redis.js';
import { manifestHash } from '../queues/manifest-hash.js';
import {
  BAKE,
  BACKFILL,
  BakePayload,
  BackfillPayload,
  CHECKPOINT,
  GC,
  GcPayload,
  PERSIST,
  PROVISION,
  PersistPayload,
  ProvisionPayload,
  QUEUES,
  WorkspaceId,
  backfillDeduplication,
  backfillJobOptions,
  bakeDedupId,
  bakeJobOptions,
  checkpointJobOptions,
  checkpointSchedulerId,
  gcDedupId,
  gcJobOptions,
  parsePayload,
  persistDeduplication,
  persistJobOptions,
  provisionDedupId,
  provisionJobOptions,
  queueNameFor,
  type BakeInput,
  type BackfillInput,
  type GcInput,
  type PersistInput,
  type PersistResult,
  type ProvisionResult,
  type QueueName,
  RollbackInput,
  rollbackDedupId,
  type RollbackResult,
} from '../queues/index.js';
import type { z } from 'zod';
import { AddressStore } from '../state/address-store.js';
import { PersistIntentStore } from '../state/persist-intent.js';
import { QueuePool } from './queue-pool.js';
import { addPersistJob } from './add-persist-job.js';
import { ensureCheckpointScheduler } from './ensure-checkpoint-scheduler.js';
import { waitForJob } from './wait-for-job.js';
import { waitForPersist } from './wait-for-persist.js';
import { withTrace } from '../observability/job-trace.js';
import { ActivityStore } from '../state/activity-store.js';
import { closeTurn, openTurn, type TurnInput, type TurnResult } from './turns.js';
import { CheckpointStore } from '../state/checkpoint-store.js';
import { registeredHosts } from '../state/worker-registry.js';
import { rejectCheckpoint, type RejectCheckpointInput, type RejectCheckpointResult } from './reject-checkpoint.js';

/** How long `{ wait: true }` waits by default. */
export const DEFAULT_WAIT_MS = 5 * 60_000;

export interface WaitOptions {
  /** Wait for the job's outcome. */
  readonly wait?: boolean;
  /** Cap of the wait. @default 300000 */
  readonly timeoutMs?: number;
  /** BullMQ priority (1 = highest). */
  readonly priority?: number;
  /** The HTTP request that caused the call: carried in the job's data, bound to its log lines (job-trace.ts). */
  readonly reqId?: string;
  /** With `wait`: called with each progress report of the job waited for (`{ step, percent, done, total }`). */
  readonly onProgress?: (progress: unknown) => void;
}

// Forwards the progress events of job `jobId()` (known once added) until the returned stop is called.
function forwardProgress(events: QueueEvents | null, options: WaitOptions, jobId: () => string | undefined): () => void {
  const onProgress = options.onProgress;
  if (!events || !onProgress) return () => undefined;
  const listener = ({ jobId: id, data }: { jobId: string; data: unknown }) => {
    if (id === jobId()) onProgress(data);
  };
  events.on('progress', listener);
  return () => events.off('progress', listener);
}

export interface Enqueued<R> {
  readonly queue: string;
  readonly jobId: string;
  /** Present when `wait` was set. */
  readonly result?: R;
}

/** What a call with `{ wait: true }` resolves with: the job's result is there (a failure throws). */
export type Waited<R> = Enqueued<R> & { readonly result: R };

/**
 * An enqueueing call: with `{ wait: true }` its answer carries the job's result (typed, never
 * optional); without, the job's id (`X`: what the call adds to either answer).
 */
export interface EnqueueCall<I, R, X = unknown> {
  (input: I, options: WaitOptions & { readonly wait: true }): Promise<Waited<R> & X>;
  (input: I, options?: WaitOptions): Promise<Enqueued<R> & X>;
}

// The one place the overloads meet the implementation: `add` returns the result whenever `wait` was set.
const enqueueCall = <I, R, X = unknown>(call: (input: I, options?: WaitOptions) => Promise<Enqueued<R> & X>): EnqueueCall<I, R, X> => call as EnqueueCall<I, R, X>;

export interface FleetClientOptions {
  readonly config: Config;
  /** A `client`-role connection; created (and owned) from `config.redis.url` when omitted. */
  readonly connection?: RedisClient;
}

export type ProvisionInput = z.input<typeof ProvisionPayload>;

export interface FleetClient {
  readonly keys: FleetKeys;
  readonly addresses: AddressStore;
  readonly intents: PersistIntentStore;
  readonly pool: QueuePool;
  readonly provision: EnqueueCall<ProvisionInput, ProvisionResult>;
  readonly persist: EnqueueCall<PersistInput, PersistResult, { seq: number }>;
  startCheckpoints(workspaceId: string, options?: { generation?: number; everyMs?: number }): Promise<{ schedulerId: string; queue: string }>;
  /** Removes the workspace's checkpoint scheduler (from `hostId`'s queue, default: its current host). */
  stopCheckpoints(workspaceId: string, options?: { hostId?: string }): Promise<boolean>;
  /** Opens (or re-opens) a turn: the workspace is not idle while it is open (it expires after its TTL). */
  openTurn(input: TurnInput): Promise<TurnResult>;
  /** Closes a turn: the idle TTL counts from now. */
  closeTurn(input: Omit<TurnInput, 'ttlMs'>): Promise<TurnResult>;
  /**
   * Rejects a checkpoint whose turn failed: the head falls back to the previous attached one
   * (fenced on `generation`; a no-op when something newer decided). Returns what is now current.
   */
  rejectCheckpoint(input: RejectCheckpointInput): Promise<RejectCheckpointResult>;
  /** Makes an earlier revision's content current again (a new revision) and restores the live tree. */
  readonly rollback: EnqueueCall<RollbackInput, RollbackResult>;
  readonly backfill: EnqueueCall<BackfillInput, unknown>;
  readonly gc: EnqueueCall<GcInput, unknown>;
  readonly bake: EnqueueCall<BakeInput, unknown, { manifestHash: string }>;
  /** Generic enqueue by queue name (CLI `fleet enqueue`), with the queue's own rules. */
  enqueue(queue: QueueName, data: unknown, options?: WaitOptions): Promise<Enqueued<unknown>>;
  close(): Promise<void>;
}

/** Creates a client. */
export function createFleetClient({ config, connection }: FleetClientOptions): FleetClient {
  const target = config.redis;
  if (!connection && !redisResolved(target)) throw new Error('createFleetClient: config.redis names no Redis (embedded, unresolved) and no connection was given');
  const owned = !connection;
  const redis = connection ?? createRedis({ target, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-client' });
  // A blocking connection of its own for QueueEvents: from the configuration, else like the given one.
  const blocking = () =>
    redisResolved(target)
      ? createRedis({ target, role: 'worker', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-client-events' })
      : duplicateRedis(redis, { ...redisOptions('worker', config.redis.commandTimeoutMs), commandTimeout: undefined, connectionName: 'fleet-client-events' });
  const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
  const pool = new QueuePool(redis, keys, blocking);
  const addresses = new AddressStore(redis, keys);
  const intents = new PersistIntentStore(redis, keys);
  const checkpoints = new CheckpointStore(redis, keys);
  const turns = { addresses, activity: new ActivityStore(redis, keys, { turnTtlMs: config.turnTtlMs, leaseMs: config.worker.heartbeatIntervalMs * 3 }), turnTtlMs: config.turnTtlMs };

  // Every call's Redis failure (a refusal, no answer within the command timeout, no connection)
  // reaches the caller as RedisUnavailableError (retryable, naming the address), never as
  // ioredis's untyped error; a job's own typed failure passes through unchanged.
  const typed =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (error) {
        throw RedisUnavailableError.from(error, redisAddress(redis)) ?? error;
      }
    };

  // Adds a job and optionally waits for it.
  async function add<R>(bullName: string, name: string, data: unknown, opts: JobsOptions, options: WaitOptions): Promise<Enqueued<R>> {
    const queue = pool.queue(bullName);
    const events = options.wait ? await pool.events(bullName) : null;
    let added: string | undefined;
    const stop = forwardProgress(events, options, () => added);
    try {
      const job = await queue.add(name, withTrace(data as object, options.reqId), { ...opts, ...(options.priority ? { priority: options.priority } : {}) });
      const jobId = String(job.id);
      added = jobId;
      if (!events) return { queue: bullName, jobId };
      const result = await waitForJob<R>(queue, jobId, events, options.timeoutMs ?? DEFAULT_WAIT_MS);
      return { queue: bullName, jobId, result };
    } finally {
      stop();
    }
  }

  // The host-bound queue of a workspace's live incarnation.
  async function hostQueue(queue: QueueName, workspaceId: string) {
    const address = await addresses.get(workspaceId);
    if (!address) throw new WorkspaceNotFoundError(workspaceId);
    return { address, bullName: queueNameFor(queue, address.hostId) };
  }

  const client: FleetClient = {
    keys,
    addresses,
    intents,
    pool,

    provision: enqueueCall(typed(async (input: ProvisionInput, options: WaitOptions = {}) => {
      const payload = parsePayload('provision payload', ProvisionPayload, input);
      return add<ProvisionResult>(PROVISION, PROVISION, payload, { ...provisionJobOptions, deduplication: { id: provisionDedupId(payload.workspaceId) } }, options);
    })),

    persist: enqueueCall(typed(async (input: PersistInput, options: WaitOptions = {}) => {
      const payload = parsePayload('persist payload', PersistPayload, input);
      const { bullName } = await hostQueue(PERSIST, payload.workspaceId);
      const events = options.wait ? await pool.events(bullName) : null;
      let added: string | undefined;
      const stop = forwardProgress(events, options, () => added);
      try {
        // The merge and the job add are one transaction where they share a slot: no intent without its job (add-persist-job.ts).
        const { seq, jobId } = await addPersistJob({
          queue: pool.queue(bullName),
          intents,
          oneTransaction: keys.layout === 'single-slot',
          payload,
          opts: { ...persistJobOptions, deduplication: persistDeduplication(payload.workspaceId), ...(options.priority ? { priority: options.priority } : {}) },
          redisAddress: redisAddress(redis),
          ...(options.reqId === undefined ? {} : { reqId: options.reqId }),
        });
        added = jobId;
        if (!events) return { queue: bullName, jobId, seq };
        const result = await waitForPersist<PersistResult>({
          intents,
          events,
          workspaceId: payload.workspaceId,
          seq,
          generation: payload.generation,
          queue: bullName,
          jobId,
          timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_MS,
        });
        return { queue: bullName, jobId, seq, result };
      } finally {
        stop();
      }
    })),

    startCheckpoints: typed(async (workspaceId: string, options: { generation?: number; everyMs?: number } = {}) => {
      parsePayload('checkpoint workspaceId', WorkspaceId, workspaceId);
      const { address, bullName } = await hostQueue(CHECKPOINT, workspaceId);
      const generation = options.generation ?? address.generation;
      const schedulerId = checkpointSchedulerId(workspaceId);
      // Not re-upserted when already current: an upsert sets off a checkpoint at once (ensure-checkpoint-scheduler.ts).
      await ensureCheckpointScheduler(pool.queue(bullName), schedulerId, options.everyMs ?? config.checkpointIntervalMs, { name: CHECKPOINT, data: { workspaceId, generation }, opts: checkpointJobOptions });
      return { schedulerId, queue: bullName };
    }),

    stopCheckpoints: typed(async (workspaceId: string, options: { hostId?: string } = {}) => {
      parsePayload('checkpoint workspaceId', WorkspaceId, workspaceId);
      const address = options.hostId ? null : await addresses.get(workspaceId);
      const hosts = options.hostId ? [options.hostId] : address ? [address.hostId] : await knownHosts(redis, keys, config.hostId);
      let removed = false;
      for (const hostId of hosts) {
        removed = (await pool.queue(queueNameFor(CHECKPOINT, hostId)).removeJobScheduler(checkpointSchedulerId(workspaceId))) || removed;
      }
      return removed;
    }),

    openTurn: typed((input: TurnInput) => openTurn(turns, input)),
    closeTurn: typed((input: Omit<TurnInput, 'ttlMs'>) => closeTurn(turns, input)),
    rejectCheckpoint: typed((input: RejectCheckpointInput) => rejectCheckpoint({ checkpoints }, input)),

    rollback: enqueueCall(typed(async (input: RollbackInput, options: WaitOptions = {}) => {
      const payload = parsePayload('rollback payload', RollbackInput, input);
      const { address, bullName } = await hostQueue(PERSIST, payload.workspaceId);
      const generation = payload.generation ?? address.generation;
      return add<RollbackResult>(
        bullName,
        'rollback',
        { workspaceId: payload.workspaceId, generation, delete: true, reason: 'rollback', force: true, rollbackTo: payload.revision },
        { ...persistJobOptions, deduplication: { id: rollbackDedupId(payload.workspaceId) } },
        options,
      );
    })),

    backfill: enqueueCall(typed(async (input: BackfillInput, options: WaitOptions = {}) => {
      const payload = parsePayload('backfill payload', BackfillPayload, input);
      return add<unknown>(BACKFILL, BACKFILL, payload, { ...backfillJobOptions, deduplication: backfillDeduplication(payload) }, options);
    })),

    gc: enqueueCall(typed(async (input: GcInput, options: WaitOptions = {}) => {
      const payload = parsePayload('gc payload', GcPayload, input);
      return add<unknown>(GC, GC, payload, { ...gcJobOptions, deduplication: { id: gcDedupId(payload) } }, options);
    })),

    bake: enqueueCall(typed(async (input: BakeInput, options: WaitOptions = {}) => {
      const payload = parsePayload('bake payload', BakePayload, input);
      const hash = manifestHash(payload.manifest);
      const enqueued = await add<unknown>(BAKE, BAKE, payload, { ...bakeJobOptions, deduplication: { id: bakeDedupId(hash) } }, options);
      return { ...enqueued, manifestHash: hash };
    })),

    enqueue: typed(async (queue: QueueName, data: unknown, options: WaitOptions = {}): Promise<Enqueued<unknown>> => {
      switch (queue) {
        case 'provision':
          return client.provision(data as ProvisionInput, options);
        case 'persist':
          return client.persist(data as PersistInput, options);
        case 'checkpoint': {
          const payload = parsePayload('checkpoint payload', QUEUES.checkpoint.schema, data) as { workspaceId: string; generation: number };
          const { bullName } = await hostQueue(CHECKPOINT, payload.workspaceId);
          return add(bullName, CHECKPOINT, payload, checkpointJobOptions, options);
        }
        case 'backfill':
          return client.backfill(data as BackfillInput, options);
        case 'gc':
          return client.gc(data as GcInput, options);
        case 'bake':
          return client.bake(data as BakeInput, options);
      }
    }),

    async close() {
      await pool.close();
      if (owned) redis.disconnect();
    },
  };
  return client;
}

// Hosts seen by the fleet (falls back to this host).
async function knownHosts(redis: RedisClient, keys: FleetKeys, fallback: string): Promise<string[]> {
  const hosts = await registeredHosts(redis, keys);
  return hosts.length > 0 ? hosts : [fallback];
}

