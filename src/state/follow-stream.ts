/**
 * Follows a Redis stream with blocking reads (XREAD BLOCK) on a connection of its own (a blocking
 * read would hold up every other command of a shared one), handing each batch of entries on in
 * order, until `done()` says so or `signal` aborts. An abort drops the read in flight (the
 * connection is closed under it), so a caller that needs everything reads the rest without
 * blocking from the last id it was handed.
 */
import { duplicateRedis, type RedisClient } from '../redis.js';

/** A stream entry as ioredis returns it with buffers: its id and its fields as name, value, ... */
export type StreamEntry = [id: Buffer, fields: Buffer[]];

/** One blocking read: the follower checks its signal and `done()` between reads. */
const BLOCK_MS = 1_000;

/** The fields of a stream entry as a map of name → value. */
export function entryFields(raw: readonly Buffer[]): Map<string, Buffer> {
  const fields = new Map<string, Buffer>();
  for (let i = 0; i + 1 < raw.length; i += 2) fields.set(raw[i]!.toString(), raw[i + 1]!);
  return fields;
}

export interface FollowOptions {
  readonly key: string;
  /** Entries after this id are read ('0-0': from the start). Updated by `handOn` through the cursor it owns. */
  readonly after: () => string;
  readonly handOn: (entries: readonly StreamEntry[]) => void;
  readonly done: () => boolean;
  readonly signal: AbortSignal;
  /** Name of the connection (CLIENT LIST). */
  readonly name: string;
}

export async function followStream(redis: RedisClient, { key, after, handOn, done, signal, name }: FollowOptions): Promise<void> {
  const connection = duplicateRedis(redis, { connectionName: name, commandTimeout: BLOCK_MS + 10_000, lazyConnect: true });
  connection.on('error', () => undefined);
  const stop = () => connection.disconnect();
  signal.addEventListener('abort', stop, { once: true });
  try {
    while (!done() && !signal.aborted) {
      let read: [Buffer, StreamEntry[]][] | null;
      try {
        read = (await connection.xreadBuffer('BLOCK', BLOCK_MS, 'STREAMS', key, after())) as [Buffer, StreamEntry[]][] | null;
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      if (signal.aborted) return;
      for (const [, entries] of read ?? []) handOn(entries);
    }
  } finally {
    signal.removeEventListener('abort', stop);
    connection.disconnect();
  }
}
