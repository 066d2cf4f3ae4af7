/**
 * What the fleet tells app pods happened (`GET /v1/events`, state/event-store.ts): a workspace
 * provisioned, a revision persisted, a job failed for good, an idle workspace reaped, a workspace
 * reset. Each event has the id of its Redis stream entry (`<ms>-<seq>`: ordered, and what
 * `Last-Event-ID` resumes from) and the time it was recorded. `lost` is said by a reader, never
 * stored: the events after the id a client resumed from were trimmed before it came back.
 */
import { z } from 'zod';

const Base = { id: z.string().describe('Stream id; send it back as Last-Event-ID to resume after it'), at: z.iso.datetime().describe('When the event was recorded (ISO 8601 UTC)') };

export const ProvisionedEvent = z.object({
  ...Base,
  type: z.literal('provisioned'),
  workspaceId: z.string(),
  generation: z.number().int(),
  handle: z.string(),
  hostId: z.string(),
  provider: z.string(),
  outcome: z.string(),
  source: z.string().nullable(),
});

export const PersistedEvent = z.object({
  ...Base,
  type: z.literal('persisted'),
  workspaceId: z.string(),
  generation: z.number().int(),
  revision: z.string(),
  reason: z.string(),
  turnId: z.string().nullable(),
  files: z.number().int(),
  bytes: z.number().int(),
  changedFiles: z.number().int(),
  deletedFiles: z.number().int(),
});

export const FailedEvent = z.object({
  ...Base,
  type: z.literal('failed'),
  workspaceId: z.string().nullable(),
  queue: z.string(),
  jobId: z.string(),
  code: z.string(),
  message: z.string(),
  retryable: z.boolean(),
});

export const ReapedEvent = z.object({ ...Base, type: z.literal('reaped'), workspaceId: z.string(), generation: z.number().int() });

export const ResetEvent = z.object({ ...Base, type: z.literal('reset'), workspaceId: z.string(), generation: z.number().int() });

export const LostEvent = z.object({
  ...Base,
  type: z.literal('lost'),
  workspaceId: z.null(),
  after: z.string().describe('The id the client resumed from'),
  oldest: z.string().describe('The oldest event still kept: what came between is gone (read the state again)'),
});

export const FleetEventSchema = z.discriminatedUnion('type', [ProvisionedEvent, PersistedEvent, FailedEvent, ReapedEvent, ResetEvent, LostEvent]);
export type FleetEvent = z.infer<typeof FleetEventSchema>;

/** The types a client may ask for (`lost` is always sent). */
export const FLEET_EVENT_TYPES = ['provisioned', 'persisted', 'failed', 'reaped', 'reset'] as const;
export type FleetEventType = (typeof FLEET_EVENT_TYPES)[number];

/** An event as it is recorded: everything but the id and time the stream gives it. */
export type FleetEventInput = { [T in FleetEventType]: Omit<Extract<FleetEvent, { type: T }>, 'id' | 'at'> }[FleetEventType];
