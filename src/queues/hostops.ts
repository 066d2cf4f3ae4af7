/**
 * `hostops@{hostId}` (internal): provider operations on a local sandbox that must run on the host
 * holding its directory (create, restore, marker, stop, destroy, exec...), requested by a
 * provisioner or CLI on another host. Served by every process that serves the host's persist
 * queue. Arguments are JSON (buffers as base64, no AbortSignal: the job has its own deadline).
 */
import { z } from 'zod';
import type { Config } from '../config.js';
import type { QueueDefinition } from './index.js';

export const HOSTOPS = 'hostops';

export const HOST_OPS = ['create', 'get', 'resume', 'exec', 'writeFiles', 'readFile', 'importTree', 'markReady', 'readReady', 'clearReady', 'snapshot', 'deleteSnapshot', 'stop', 'destroy'] as const;
export type HostOp = (typeof HOST_OPS)[number];

export const HostOpPayload = z
  .object({
    op: z.enum(HOST_OPS, { error: `must be one of ${HOST_OPS.join(', ')}` }),
    handle: z.string().max(512).optional(),
    /** Operation arguments besides the handle (JSON). */
    args: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type HostOpPayload = z.infer<typeof HostOpPayload>;

export const HOSTOPS_QUEUE: QueueDefinition = Object.freeze({
  name: HOSTOPS,
  schema: HostOpPayload,
  hostBound: true,
  deadlineMs: (c: Config) => c.deadlines.provisionMs,
  concurrency: 16,
});

/** One try, short retention: the caller waits for the result and decides itself. */
export const hostOpJobOptions = { attempts: 1, removeOnComplete: { age: 300, count: 1_000 }, removeOnFail: { age: 3_600, count: 1_000 } };
