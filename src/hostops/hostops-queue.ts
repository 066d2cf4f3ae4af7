/**
 * `hostops@{hostId}` (internal): the queue carrying host-op requests (host-op-payload.ts) to the
 * host holding a local sandbox's directory, from a provisioner or CLI on another host. Served by
 * every process that serves the host's persist queue.
 */
import type { Config } from '../config.js';
import type { QueueDefinition } from '../queues/index.js';
import { HostOpPayload } from './host-op-payload.js';

export const HOSTOPS = 'hostops';

/** The BullMQ queue of a host's operations. */
export const hostOpsQueueName = (hostId: string): string => `${HOSTOPS}@${hostId}`;

export const HOSTOPS_QUEUE: QueueDefinition = Object.freeze({
  name: HOSTOPS,
  schema: HostOpPayload,
  hostBound: true,
  deadlineMs: (c: Config) => c.deadlines.provisionMs,
  // The caller's deadline travels with the job (the payload is validated by now); without one, the provision deadline.
  jobDeadlineMs: (payload: unknown, c: Config) => (typeof payload === 'object' && payload !== null && 'deadlineMs' in payload && typeof payload.deadlineMs === 'number' ? payload.deadlineMs : c.deadlines.provisionMs),
  concurrency: 16,
});

/** One try, short retention: the caller waits for the result and decides itself. */
export const hostOpJobOptions = { attempts: 1, removeOnComplete: { age: 300, count: 1_000 }, removeOnFail: { age: 3_600, count: 1_000 } };
