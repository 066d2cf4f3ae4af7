/**
 * The output of a command run on another host, on its way to the caller while it runs. The host
 * running it appends the chunks to one Redis stream per exec (`exec-out:<id>`, a UUID the caller
 * chose), numbered, then an end entry; the caller follows the stream with blocking reads on a
 * connection of its own and, once the host op's result is in, drains what is left up to the end
 * entry. The result itself still carries the first MiB of each stream, so a caller that lost the
 * stream (Redis failover, trimmed entries) loses nothing it would have had without streaming.
 *
 * The stream is capped (approximate MAXLEN) and expires a while after its last append, so a
 * caller that went away leaves nothing behind for long. Entries: `{ s: 'o'|'e', d: bytes, n }`
 * for output (`n` counts entries from 1: a gap tells the reader entries were trimmed before it
 * read them), `{ end: '1' }` last.
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { entryFields, followStream, type StreamEntry } from './follow-stream.js';

export type OutputStreamName = 'stdout' | 'stderr';

export interface OutputChunk {
  readonly stream: OutputStreamName;
  readonly data: Buffer;
}

/** Entries kept per exec (approximate MAXLEN): with chunks of at most CHUNK_BYTES, 32 MiB. */
export const MAX_ENTRIES = 2_048;
/** Largest chunk one entry carries (the writer splits bigger ones). */
export const CHUNK_BYTES = 16 * 1024;
/** How long a stream outlives its last append (a caller that went away leaves it behind). */
export const OUTPUT_TTL_MS = 10 * 60_000;

/** What a reader does with the entries it reads, in order; true once the end entry was seen. */
export interface OutputCursor {
  /** Id of the last entry handed on ('0-0' before the first). */
  lastId: string;
  /** Number (`n`) of the last output entry handed on. */
  lastSeq: number;
  ended: boolean;
}

export class ExecOutputStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  /** Appends chunks (numbered from `firstSeq`), each at most CHUNK_BYTES, and refreshes the expiry. */
  async append(execId: string, chunks: readonly OutputChunk[], firstSeq: number): Promise<void> {
    if (chunks.length === 0) return;
    const key = this.keys.execOutput(execId);
    const multi = this.redis.multi();
    chunks.forEach((chunk, i) => {
      multi.xadd(key, 'MAXLEN', '~', MAX_ENTRIES, '*', 's', chunk.stream === 'stdout' ? 'o' : 'e', 'd', chunk.data, 'n', String(firstSeq + i));
    });
    multi.pexpire(key, OUTPUT_TTL_MS);
    await multi.exec();
  }

  /** Marks the output complete (after the last append). */
  async end(execId: string): Promise<void> {
    const key = this.keys.execOutput(execId);
    await this.redis.multi().xadd(key, 'MAXLEN', '~', MAX_ENTRIES, '*', 'end', '1').pexpire(key, OUTPUT_TTL_MS).exec();
  }

  /** Removes the stream (the caller has read it all). */
  async remove(execId: string): Promise<void> {
    await this.redis.del(this.keys.execOutput(execId));
  }

  /**
   * Follows the stream with blocking reads on a connection of its own until the end entry, or
   * until `signal` aborts (then the read in flight is dropped: call `drain` with the same cursor
   * for what is left). Every entry goes to `deliver`, in order.
   */
  async follow(execId: string, cursor: OutputCursor, deliver: (chunk: OutputChunk, gap: number) => void, signal: AbortSignal): Promise<void> {
    await followStream(this.redis, {
      key: this.keys.execOutput(execId),
      after: () => cursor.lastId,
      handOn: (entries) => this.#handOn(entries, cursor, deliver),
      done: () => cursor.ended,
      signal,
      name: 'fleet-exec-output',
    });
  }

  /** Reads what is left after `cursor` (no blocking), up to the end entry. */
  async drain(execId: string, cursor: OutputCursor, deliver: (chunk: OutputChunk, gap: number) => void): Promise<void> {
    const key = this.keys.execOutput(execId);
    while (!cursor.ended) {
      const entries = (await this.redis.xrangeBuffer(key, `(${cursor.lastId}`, '+', 'COUNT', 256)) as StreamEntry[];
      if (entries.length === 0) return;
      this.#handOn(entries, cursor, deliver);
    }
  }

  // Delivers entries in order, moving the cursor; `gap` counts entries trimmed before they were read.
  #handOn(entries: readonly StreamEntry[], cursor: OutputCursor, deliver: (chunk: OutputChunk, gap: number) => void): void {
    for (const [id, raw] of entries) {
      cursor.lastId = id.toString();
      const fields = entryFields(raw);
      if (fields.has('end')) {
        cursor.ended = true;
        return;
      }
      const seq = Number(fields.get('n')?.toString());
      const data = fields.get('d');
      if (!Number.isSafeInteger(seq) || !data) continue;
      const gap = Math.max(0, seq - cursor.lastSeq - 1);
      cursor.lastSeq = seq;
      deliver({ stream: fields.get('s')?.toString() === 'e' ? 'stderr' : 'stdout', data }, gap);
    }
  }
}

/** A fresh cursor (before the first entry). */
export const newOutputCursor = (): OutputCursor => ({ lastId: '0-0', lastSeq: 0, ended: false });
