/**
 * The typed registry of the six fleet queues (DESIGN.md "Queues and jobs").
 *
 * Host-bound queues (`persist`, `checkpoint`) run on the host that holds the live directory and
 * are named `<queue>@<hostId>`; the others are global.
 */
import type { z } from 'zod';
import type { Config } from '../config.js';
import { PROVISION, ProvisionPayload } from './provision.js';
import { PERSIST, PersistPayload } from './persist.js';
import { CHECKPOINT, CheckpointPayload } from './checkpoint.js';
import { BACKFILL, BackfillPayload } from './backfill.js';
import { GC, GcPayload } from './gc.js';
import { BAKE, BakePayload } from './bake.js';

export * from './provision.js';
export * from './persist.js';
export * from './checkpoint.js';
export * from './backfill.js';
export * from './gc.js';
export * from './bake.js';
export * from './payload.js';

export const QUEUE_NAMES = [PROVISION, PERSIST, CHECKPOINT, BACKFILL, GC, BAKE] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface QueueDefinition<S extends z.ZodType = z.ZodType> {
  /** Base name (one of the six, or an internal queue such as `hostops`). */
  readonly name: string;
  readonly schema: S;
  /** Runs on the host holding the live tree (`<name>@<hostId>`). */
  readonly hostBound: boolean;
  /** Deadline of one job of this queue. */
  readonly deadlineMs: (config: Config) => number;
  /** Deadline of one job given its validated payload, when the caller's deadline travels with it. @default deadlineMs */
  readonly jobDeadlineMs?: (payload: unknown, config: Config) => number;
  /** Jobs at once per worker process unless FLEET_CONCURRENCY overrides it. */
  readonly concurrency: number;
}

export const QUEUES: { readonly [K in QueueName]: QueueDefinition } = Object.freeze({
  // Provisioning waits on I/O and Redis, not CPU: many at once. Persists run rsync: a few.
  provision: { name: PROVISION, schema: ProvisionPayload, hostBound: false, deadlineMs: (c: Config) => c.deadlines.provisionMs, concurrency: 16 },
  persist: { name: PERSIST, schema: PersistPayload, hostBound: true, deadlineMs: (c: Config) => c.deadlines.persistMs, concurrency: 4 },
  checkpoint: { name: CHECKPOINT, schema: CheckpointPayload, hostBound: true, deadlineMs: (c: Config) => c.deadlines.persistMs, concurrency: 8 },
  backfill: { name: BACKFILL, schema: BackfillPayload, hostBound: false, deadlineMs: (c: Config) => c.deadlines.backfillMs, concurrency: 2 },
  gc: { name: GC, schema: GcPayload, hostBound: false, deadlineMs: (c: Config) => c.deadlines.gcMs, concurrency: 2 },
  bake: { name: BAKE, schema: BakePayload, hostBound: false, deadlineMs: (c: Config) => c.deadlines.bakeMs, concurrency: 1 },
});

/** True for one of the six base queue names. */
export function isQueueName(name: string): name is QueueName {
  return (QUEUE_NAMES as readonly string[]).includes(name);
}

/** The BullMQ queue name: `persist@host-a` for host-bound queues, the base name otherwise. */
export function queueNameFor(name: QueueName, hostId: string): string {
  return QUEUES[name].hostBound ? `${name}@${hostId}` : name;
}

/** Splits a BullMQ queue name into its base queue and host (`null` for global queues). */
export function parseQueueName(bullName: string): { name: QueueName; hostId: string | null } | null {
  const [base, hostId, ...rest] = bullName.split('@');
  if (base === undefined || rest.length > 0 || !isQueueName(base)) return null;
  if (QUEUES[base].hostBound !== (hostId !== undefined)) return null;
  return { name: base, hostId: hostId ?? null };
}
