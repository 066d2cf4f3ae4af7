/**
 * Writers of the shared object store in flight (persists and rollbacks of format 2): what the
 * objects GC must never race (the restic prune lesson). A writer registers before it writes or
 * reuses anything, declares the root trees it builds on by reference (its basis revision, a
 * rollback's source), and leaves once its revision record is written, or it failed. The objects
 * GC keeps every object and tree written or refreshed since the oldest registered writer began,
 * and marks declared roots as reachable. The grace period protects the same things when this
 * registry is lost (a Redis failover forgetting a registration), so it is a second line, not the
 * only one. One hash, one owner: this store.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { z } from 'zod';
import type { FleetKeys } from '../keys.js';
import { OBJECT_ID_PATTERN } from '../archive/tree-object.js';

export const StoreWriterEntry = z
  .object({
    workspaceId: z.string(),
    /** When the writer registered (its clock, epoch ms), before its first write. */
    startedAt: z.number().int().min(0),
    /** Root trees it builds on by reference. */
    roots: z.array(z.string().regex(OBJECT_ID_PATTERN)).max(16),
  })
  .strict();
export type StoreWriterEntry = z.infer<typeof StoreWriterEntry>;

/** One registered writer. */
export interface StoreWriter {
  readonly token: string;
  readonly startedAt: number;
  /** Adds a root tree the writer builds on by reference (kept reachable until `end`). */
  declare(root: string): Promise<void>;
  /** Leaves the registry (a failure to leave only delays GC: stale entries are pruned). */
  end(): Promise<void>;
}

export interface ListedWriters {
  readonly writers: readonly (StoreWriterEntry & { readonly token: string })[];
  /** Fields that are not a writer entry (never written by the fleet): reported, then ignored. */
  readonly invalid: readonly { readonly token: string; readonly value: string }[];
}

export class StoreWriters {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
    private readonly now: () => number = Date.now,
  ) {}

  /** Registers a writer of `workspaceId`'s revisions. */
  async begin(workspaceId: string): Promise<StoreWriter> {
    const token = randomUUID();
    const entry: StoreWriterEntry = { workspaceId, startedAt: this.now(), roots: [] };
    const key = this.keys.storeWriters();
    await this.redis.hset(key, token, JSON.stringify(entry));
    return {
      token,
      startedAt: entry.startedAt,
      declare: async (root) => {
        if (!OBJECT_ID_PATTERN.test(root)) throw new TypeError(`not a tree id: ${JSON.stringify(root)}`);
        if (!entry.roots.includes(root)) entry.roots.push(root);
        await this.redis.hset(key, token, JSON.stringify(entry));
      },
      end: async () => {
        await this.redis.hdel(key, token).catch(() => undefined);
      },
    };
  }

  /** Every registered writer. */
  async list(): Promise<ListedWriters> {
    const raw = await this.redis.hgetall(this.keys.storeWriters());
    const writers: (StoreWriterEntry & { token: string })[] = [];
    const invalid: { token: string; value: string }[] = [];
    for (const [token, value] of Object.entries(raw)) {
      const parsed = StoreWriterEntry.safeParse(parseJson(value));
      if (parsed.success) writers.push({ token, ...parsed.data });
      else invalid.push({ token, value });
    }
    return { writers, invalid };
  }

  /** Forgets entries (writers that died without leaving, or invalid fields). */
  async forget(tokens: readonly string[]): Promise<void> {
    if (tokens.length > 0) await this.redis.hdel(this.keys.storeWriters(), ...tokens);
  }
}

/** Runs `work` as a registered writer of `workspaceId`, leaving the registry afterwards. */
export async function asStoreWriter<T>(writers: Pick<StoreWriters, 'begin'>, workspaceId: string, work: (writer: StoreWriter) => Promise<T>): Promise<T> {
  const writer = await writers.begin(workspaceId);
  try {
    return await work(writer);
  } finally {
    await writer.end();
  }
}

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
