/**
 * Enqueues one persist request of the fleet's client: the merge into the workspace's intent and
 * the BullMQ job add are queued on one MULTI and sent as one EXEC, so Redis admits or refuses
 * both (BullMQ's FlowProducer adds its jobs the same way: `Job#addJob` on a transaction).
 *
 * Why both or neither holds on Redis 7: a command queued while Redis is out of memory (or
 * otherwise refusing) is rejected at once and EXEC answers EXECABORT, running nothing. If memory
 * runs out between queueing and EXEC, the OOM state is sampled once for the whole EXEC and each
 * script is refused at its first write that can grow memory; both scripts start with one (the
 * merge with HINCRBY, BullMQ's addStandardJob with INCR of the job counter), so both are refused.
 *
 * A half that fails while the other succeeded (possible only for a NOSCRIPT after a SCRIPT FLUSH
 * on a live connection) is completed on its own: the merge is idempotent by request id, and a
 * job that was not added can be added again. The job carries the request id, which tells the
 * worker that its request is already merged.
 *
 * Under `FLEET_REDIS_KEY_LAYOUT=per-queue` the queue's keys hash to another slot than the intent,
 * and a MULTI cannot span slots (a cluster refuses it). There the merge goes first and the add
 * second, each retried once on its own as above. A refusal of the merge writes nothing; an add
 * refused after its merge (memory ran out between the two) leaves a merged request without a job
 * of its own: the caller gets the error, and the next persist of the workspace (its next
 * checkpoint tick at the latest) takes the request with its own.
 */
import { randomUUID } from 'node:crypto';
import { Job, type JobsOptions, type Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { PERSIST, type PersistPayload } from '../queues/persist.js';
import { withTrace } from '../observability/job-trace.js';
import { SpanKind } from 'bullmq';
import type { PersistIntentStore } from '../state/persist-intent.js';

export interface AddPersistJobOptions {
  readonly queue: Queue;
  readonly intents: PersistIntentStore;
  /** Merge and add in one MULTI (their keys share a slot); false: merge, then add. */
  readonly oneTransaction?: boolean;
  readonly payload: PersistPayload;
  readonly opts: JobsOptions;
  /** `host:port` of the Redis (for a refusal's error). */
  readonly redisAddress: string;
  /** The HTTP request that caused the persist (job-trace.ts), carried in the job's data only. */
  readonly reqId?: string;
}

export interface AddedPersistJob {
  /** The request's sequence number in the intent (what waiters wait for). */
  readonly seq: number;
  /** The job that will run it (an existing one when deduplicated). */
  readonly jobId: string;
}

// One reply of an EXEC: the error, or the reply value.
type Reply = [Error | null, unknown];

/**
 * Adds the job inside BullMQ's producer span (`add persist@<host>.persist`, when tracing is on):
 * the transaction below bypasses `Queue#add`, which would otherwise open it and put the trace
 * context into the job's options for the worker's span to continue.
 */
export function addPersistJob(options: AddPersistJobOptions): Promise<AddedPersistJob> {
  // In two steps the job add is BullMQ's own `Queue#add`, which makes the producer span itself.
  if (options.oneTransaction === false) return addInTransaction(options);
  return options.queue.trace<AddedPersistJob>(SpanKind.PRODUCER, 'add', `${options.queue.name}.${PERSIST}`, async (span, metadata) => {
    const added = await addInTransaction(metadata ? { ...options, opts: { ...options.opts, telemetry: { metadata } } } : options);
    span?.setAttributes({ 'bullmq.job.name': PERSIST, 'bullmq.job.id': added.jobId });
    return added;
  }) as Promise<AddedPersistJob>;
}

async function addInTransaction({ queue, intents, oneTransaction = true, payload, opts, redisAddress, reqId }: AddPersistJobOptions): Promise<AddedPersistJob> {
  const refused = (error: unknown) => RedisUnavailableError.from(error, redisAddress) ?? error;
  const requestId = randomUUID();
  const data = { ...payload, requestId };
  const jobData = withTrace(data, reqId);
  const twice = <T>(step: () => Promise<T>) => retriedOnce(step, refused);
  if (!oneTransaction) {
    const seq = await twice(() => intents.merge(payload.workspaceId, data));
    const jobId = (await twice(() => queue.add(PERSIST, jobData, opts))).id;
    if (typeof jobId !== 'string') throw new Error('adding the persist job gave no job id');
    return { seq, jobId };
  }
  // BullMQ's transaction wraps an ioredis MULTI (the Redis backend of a Queue built on ioredis).
  const multi = (await queue.getBackend().client).multi();
  intents.queueMerge(multi as unknown as ChainableCommander, payload.workspaceId, data);
  // What Queue#add builds (queue defaults under the job's options), queued instead of sent.
  await new Job(queue, PERSIST, jobData, { ...queue.jobsOpts, ...opts }).addJob(multi);
  let replies: Reply[];
  try {
    replies = ((await multi.exec()) ?? []) as Reply[];
  } catch (error) {
    throw refused(error);
  }
  const [mergeError, seqReply] = replies[0] ?? [new Error('EXEC returned no merge reply'), null];
  const [addError, jobReply] = replies[1] ?? [new Error('EXEC returned no add reply'), null];
  if (mergeError && addError) throw refused(mergeError);
  // Completes a half that failed on its own (see the header), retried once; a failure here is the caller's error.
  const seq = mergeError ? await twice(() => intents.merge(payload.workspaceId, data)) : Number(seqReply);
  const jobId = addError ? (await twice(() => queue.add(PERSIST, jobData, opts))).id : jobReply;
  if (typeof jobId !== 'string') throw new Error(`adding the persist job failed with code ${String(jobId)}`);
  return { seq, jobId };
}

// A step retried once (a NOSCRIPT after a flush, a reconnect); its second error, mapped by `refused`, is the caller's.
async function retriedOnce<T>(step: () => Promise<T>, refused: (error: unknown) => unknown): Promise<T> {
  try {
    return await step();
  } catch {
    try {
      return await step();
    } catch (error) {
      throw refused(error);
    }
  }
}
