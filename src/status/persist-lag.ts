/**
 * Persist lag (G3): for every active workspace (published, runtime not stopped), the time since
 * the archive last caught up with it: now − max(start of the newest successful persist run,
 * publication). A run holds the live tree as it was when it began reading it, not when it
 * finished, so the lag counts from its start (`capturedAt`; `completedAt` for runs recorded
 * before that field). A checkpoint that found nothing new counts as caught up.
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from '../keys.js';

export interface LagSummary {
  readonly activeWorkspaces: number;
  readonly maxPersistLagMs: number;
  /** Lag of each active workspace (for histograms). */
  readonly lags: readonly number[];
}

/** The persist lag at `now` of a workspace published at `publishedAt` with the given persist status fields. */
export function lagMs(now: number, publishedAt: number, status: { readonly completedAt: number; readonly capturedAt: number }): number {
  return Math.max(0, now - Math.max(publishedAt, status.capturedAt || status.completedAt));
}

export async function readPersistLag(redis: Redis, keys: FleetKeys, now = Date.now()): Promise<LagSummary> {
  const workspaces = await redis.zrange(keys.workspaces(), '0', '-1');
  const lags: number[] = [];
  for (let i = 0; i < workspaces.length; i += 500) {
    const batch = workspaces.slice(i, i + 500);
    const pipeline = redis.pipeline();
    for (const ws of batch) {
      pipeline.hget(keys.address(ws), 'publishedAt');
      pipeline.hmget(keys.persistStatus(ws), 'completedAt', 'capturedAt');
      pipeline.hget(keys.runtime(ws), 'state');
    }
    const replies = (await pipeline.exec()) ?? [];
    for (let j = 0; j < batch.length; j++) {
      const publishedAt = replies[j * 3]?.[1] as string | null;
      const [completedAt, capturedAt] = (replies[j * 3 + 1]?.[1] as (string | null)[] | undefined) ?? [null, null];
      const state = replies[j * 3 + 2]?.[1] as string | null;
      if (!publishedAt || state === 'stopped') continue;
      lags.push(lagMs(now, Number(publishedAt), { completedAt: Number(completedAt ?? 0), capturedAt: Number(capturedAt ?? 0) }));
    }
  }
  return { activeWorkspaces: lags.length, maxPersistLagMs: lags.length ? Math.max(...lags) : 0, lags };
}
