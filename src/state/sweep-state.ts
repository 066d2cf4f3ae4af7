/**
 * The stored state of a backfill sweep, per source, in the `keys.backfillSweep()` hash:
 *
 *   `{source}:cursor`  last workspace id of the last finished batch (resume after it)
 *   `{source}:stats`   counters of the sweep in progress (JSON, SweepStats)
 *   `{source}:last`    counters of the last completed sweep (JSON, SweepStats)
 *
 * Written only through the lease (sweep-lease.ts); a completed sweep clears the cursor, so the
 * next one starts over (new legacy workspaces, earlier failures).
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';

export interface SweepStats {
  readonly startedAt: number;
  readonly updatedAt: number;
  /** Workspaces of the source up to the cursor. */
  readonly position: number;
  readonly total: number;
  readonly migrated: number;
  /** Backfilled except files a live tree cannot take yet (not marked migrated; a later sweep retries). */
  readonly partial: number;
  readonly alreadyMigrated: number;
  readonly absent: number;
  readonly failed: number;
  readonly copiedFiles: number;
  readonly copiedBytes: number;
  /** Times the sweep resumed from a stored cursor (after a crash, cancel or continuation). */
  readonly resumes: number;
  readonly errors: readonly { readonly workspaceId: string; readonly code: string; readonly message: string }[];
}

export interface SweepState {
  readonly cursor: string | null;
  readonly stats: SweepStats | null;
  readonly last: SweepStats | null;
}

export const sweepFields = (source: string) => ({ cursor: `${source}:cursor`, stats: `${source}:stats`, last: `${source}:last` });

// Parses a JSON field (null when absent or unreadable).
function parse<T>(raw: string | null | undefined): T | null {
  if (!raw) return null;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

/** The stored cursor and counters of a source's sweep. */
export async function readSweepState(redis: RedisClient, keys: FleetKeys, source: string): Promise<SweepState> {
  const fields = sweepFields(source);
  const [cursor, stats, last] = await redis.hmget(keys.backfillSweep(), fields.cursor, fields.stats, fields.last);
  return { cursor: cursor || null, stats: parse<SweepStats>(stats), last: parse<SweepStats>(last) };
}

/** Counters of a fresh sweep. */
export function freshStats(now = Date.now()): SweepStats {
  return { startedAt: now, updatedAt: now, position: 0, total: 0, migrated: 0, partial: 0, alreadyMigrated: 0, absent: 0, failed: 0, copiedFiles: 0, copiedBytes: 0, resumes: 0, errors: [] };
}
