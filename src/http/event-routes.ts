/**
 * `GET /v1/events`: what the fleet did, as Server-Sent Events (state/fleet-event.ts): provisioned,
 * persisted (with the revision), failed (a job that failed for good, with its typed failure),
 * reaped, reset. Each event's SSE id is its stream id: a client that reconnects with
 * `Last-Event-ID` (browsers do it themselves) gets every event after it that is still kept, or
 * first a `lost` event when some were trimmed meanwhile (read the state again then). Without
 * one it starts at the newest event. Filtered by workspace and type, and by the token's scope: a
 * workspace-limited token sees its workspaces' events only.
 */
import { z } from 'zod';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { WorkspaceId } from '../queues/index.js';
import { STREAM_ID_PATTERN, type EventReader } from '../state/event-store.js';
import { FLEET_EVENT_TYPES, FleetEventSchema, type FleetEvent } from '../state/fleet-event.js';
import type { ApiRoute } from './api-route.js';

/** Longest quiet time before a heartbeat comment (proxies close idle connections). */
const HEARTBEAT_MS = 15_000;
/** What an EventSource waits before it reconnects. */
const RETRY_MS = 2_000;

const TYPES_PATTERN = new RegExp(`^(${FLEET_EVENT_TYPES.join('|')})(,(${FLEET_EVENT_TYPES.join('|')}))*$`);

export const EventsQuery = z
  .object({
    workspaceId: WorkspaceId.optional().describe('Only this workspace'),
    types: z.string({ error: 'must be a string' }).regex(TYPES_PATTERN, { error: `must be a comma-separated list of ${FLEET_EVENT_TYPES.join(', ')}` }).optional().describe('Only these types (comma-separated)'),
    since: z.string({ error: 'must be a string' }).regex(STREAM_ID_PATTERN, { error: 'must be an event id <ms>-<seq>' }).optional().describe('Resume after this event id (as Last-Event-ID does)'),
  })
  .strict();

/** One event as an SSE message (a `lost` event has no id: the client keeps the one it resumes from). */
export function sseMessage(event: FleetEvent): string {
  return `${event.type === 'lost' ? '' : `id: ${event.id}\n`}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

// The messages of a reader: events that pass `keep`, a heartbeat comment when none came for a while.
function messages(reader: EventReader, first: readonly string[], keep: (event: FleetEvent) => boolean): AsyncIterable<string> {
  const pending = [...first];
  let closed = false;
  return {
    [Symbol.asyncIterator]: () => ({
      async next() {
        while (pending.length === 0) {
          if (closed) return { value: undefined, done: true };
          let batch: FleetEvent[];
          try {
            batch = await reader.next(HEARTBEAT_MS);
          } catch (error) {
            if (closed) return { value: undefined, done: true };
            throw error;
          }
          if (batch.length === 0) pending.push(': heartbeat\n\n');
          for (const event of batch) if (keep(event)) pending.push(sseMessage(event));
        }
        return { value: pending.shift()!, done: false };
      },
      async return() {
        closed = true;
        reader.close();
        return { value: undefined, done: true };
      },
    }),
  };
}

export const EVENT_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    scope: 'app',
    path: '/v1/events',
    operationId: 'streamEvents',
    filtersWorkspaces: true,
    summary: 'What the fleet did, as Server-Sent Events (provisioned, persisted, failed, reaped, reset; lost when events were trimmed); resumable with Last-Event-ID',
    query: EventsQuery,
    produces: 'text/event-stream',
    response: FleetEventSchema,
    waitable: false,
    errorStatuses: [],
    result: '200 text/event-stream: one message per event, `event:` its type, `id:` its stream id, `data:` the event as JSON',
    async handle(deps, { query, header, allows }) {
      const resumeFrom = header('last-event-id') ?? query.since;
      if (resumeFrom !== undefined && !STREAM_ID_PATTERN.test(resumeFrom)) {
        throw new PayloadInvalidError('request headers', [{ field: 'Last-Event-ID', message: 'must be an event id <ms>-<seq>', value: resumeFrom }]);
      }
      const types = query.types ? new Set(query.types.split(',')) : null;
      // A workspace-limited token never sees an event of no workspace (it matches no workspace named '').
      const keep = (event: FleetEvent) =>
        (types === null || types.has(event.type)) && (query.workspaceId === undefined || event.workspaceId === query.workspaceId) && (event.workspaceId === null ? allows('') : allows(event.workspaceId));
      const start = resumeFrom ?? (await deps.events.newest()) ?? '0-0';
      const first = [`retry: ${RETRY_MS}\n\n`];
      if (resumeFrom !== undefined && (await deps.events.lostAfter(resumeFrom))) {
        const oldest = (await deps.events.oldest()) ?? resumeFrom;
        first.push(sseMessage({ type: 'lost', id: resumeFrom, at: new Date().toISOString(), workspaceId: null, after: resumeFrom, oldest }));
      }
      return { kind: 'stream', status: 200, contentType: 'text/event-stream', chunks: messages(deps.events.reader(start), first, keep) };
    },
  },
];
