/**
 * The fleet's events (state/fleet-event.ts) in one Redis stream, newest appended by whichever
 * process saw them happen, the oldest trimmed past MAX_EVENTS (approximately). Readers page
 * forward from an id with blocking reads on a connection of their own, one page per call, so a
 * slow reader only holds its own connection and reads as fast as it consumes. An event is
 * recorded after what it reports is durable; recording never fails the work (it is logged).
 */
import { duplicateRedis, type RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { FleetEventSchema, type FleetEvent, type FleetEventInput } from './fleet-event.js';
import { entryFields, type StreamEntry } from './follow-stream.js';

/** Events kept (approximate MAXLEN): at a few hundred bytes each, tens of MiB. */
export const MAX_EVENTS = 100_000;
/** Events one read returns at most. */
const PAGE = 200;

/** A stream id `<ms>-<seq>`. */
export const STREAM_ID_PATTERN = /^\d{1,20}-\d{1,20}$/;

/** Whether stream id `a` comes before `b`. */
export function streamIdBefore(a: string, b: string): boolean {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  return am < bm || (am === bm && as < bs);
}

// An entry as an event; null when it does not parse (a newer writer's type, a damaged entry).
function eventOf([rawId, raw]: StreamEntry): FleetEvent | null {
  const id = rawId.toString();
  const fields = entryFields(raw);
  try {
    const data = JSON.parse(fields.get('d')?.toString() ?? '{}') as Record<string, unknown>;
    const parsed = FleetEventSchema.safeParse({ ...data, id, at: new Date(Number(id.split('-')[0])).toISOString() });
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export interface EventReader {
  /**
   * The next events after the last one read (waiting up to `blockMs` for one); `[]` when none
   * came in time. Rejects once closed.
   */
  next(blockMs: number): Promise<FleetEvent[]>;
  close(): void;
}

export class EventStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** Records an event (its id and time are the stream's). */
  async emit(event: FleetEventInput): Promise<string> {
    const { type, workspaceId, ...rest } = event;
    return (await this.redis.xadd(this.keys.events(), 'MAXLEN', '~', MAX_EVENTS, '*', 't', type, 'w', workspaceId ?? '', 'd', JSON.stringify({ type, workspaceId, ...rest })))!;
  }

  /** Id of the oldest event kept (null: none). */
  async oldest(): Promise<string | null> {
    const first = (await this.redis.xrange(this.keys.events(), '-', '+', 'COUNT', 1)) as [string, string[]][];
    return first[0]?.[0] ?? null;
  }

  /** Id of the newest event (null: none). */
  async newest(): Promise<string | null> {
    const last = (await this.redis.xrevrange(this.keys.events(), '+', '-', 'COUNT', 1)) as [string, string[]][];
    return last[0]?.[0] ?? null;
  }

  /**
   * Whether events after `afterId` may have been trimmed before a reader could see them: the
   * stream has lost entries (XINFO: more added than it holds) and its oldest kept one is past
   * `afterId`. (Only when `afterId` itself was the last one trimmed is this said needlessly; a
   * reader told so reads the state again, which costs little.)
   */
  async lostAfter(afterId: string): Promise<boolean> {
    if (!(await this.redis.exists(this.keys.events()))) return false;
    const info = (await this.redis.xinfo('STREAM', this.keys.events())) as unknown[];
    const value = (name: string) => Number(info[info.indexOf(name) + 1]);
    if (!(value('entries-added') > value('length'))) return false;
    const oldest = await this.oldest();
    return oldest !== null && streamIdBefore(afterId, oldest);
  }

  /** Events after `afterId`, oldest first, at most `count` (no waiting). */
  async after(afterId: string, count = PAGE): Promise<FleetEvent[]> {
    const entries = (await this.redis.xrangeBuffer(this.keys.events(), `(${afterId}`, '+', 'COUNT', count)) as StreamEntry[];
    return entries.map(eventOf).filter((e): e is FleetEvent => e !== null);
  }

  /** A reader of the events after `afterId` ('0-0': all kept) on a connection of its own. */
  reader(afterId: string): EventReader {
    const key = this.keys.events();
    const connection = duplicateRedis(this.redis, { connectionName: 'fleet-events', commandTimeout: undefined, maxRetriesPerRequest: 1, lazyConnect: true });
    connection.on('error', () => undefined);
    let last = afterId;
    return {
      async next(blockMs) {
        const read = (await connection.xreadBuffer('COUNT', PAGE, 'BLOCK', blockMs, 'STREAMS', key, last)) as [Buffer, StreamEntry[]][] | null;
        const entries = read?.[0]?.[1] ?? [];
        if (entries.length > 0) last = entries.at(-1)![0].toString();
        return entries.map(eventOf).filter((e): e is FleetEvent => e !== null);
      },
      close: () => connection.disconnect(),
    };
  }
}
