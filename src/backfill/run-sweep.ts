/**
 * The backfill sweep (the `backfill` queue's `{kind:'sweep'}` job): walks the legacy
 * workspaces of one source in stable order, a batch at a time, and backfills those not yet
 * migrated, inline, throttled to `ratePerSec` starts per second.
 *
 * - Lease-gated: one sweep per source at a time (state/sweep-lease.ts).
 * - Resumable: after each batch the cursor (last workspace id of the batch) and the counters
 *   are saved through the lease. A sweep killed at any point resumes from the last saved batch;
 *   the in-flight batch is redone, and its migrated workspaces are skipped.
 * - A workspace that fails (lock held, deferred, ...) is counted, and a retryable failure is
 *   handed to its own `backfill:{ws}` job (low priority) so it retries with backoff.
 * - Close to the job deadline it stops after a batch and enqueues its continuation (the
 *   queue's dedup runs it right after this job).
 */
import type { RedisClient } from '../redis.js';
import { isFleetError } from '../errors/fleet-error.js';
import type { FleetKeys } from '../keys.js';
import type { MigrationStore } from '../state/migration-store.js';
import type { ProcessorContext } from '../jobs/processor-context.js';
import type { BackfillResult } from './backfill-workspace.js';
import type { BackfillSource, LegacySource } from './legacy-source.js';
import { createPacer } from './pacer.js';
import { mapBounded } from '../lib/map-bounded.js';
import { SweepLease } from '../state/sweep-lease.js';
import { freshStats, readSweepState, sweepFields, type SweepStats } from '../state/sweep-state.js';
import { anySignal } from '../lib/any-signal.js';

export interface SweepRequest {
  readonly source: BackfillSource;
  readonly batch: number;
  readonly ratePerSec: number;
}

export interface SweepDeps {
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  readonly migrations: MigrationStore;
  legacySource(source: BackfillSource): LegacySource;
  backfillOne(workspaceId: string, source: BackfillSource, signal: AbortSignal): Promise<BackfillResult>;
  /** Hands a failed workspace to its own retrying job. */
  requeue(workspaceId: string, source: BackfillSource): Promise<void>;
  /** Enqueues the continuation of a sweep stopped before its deadline. */
  continueLater(request: SweepRequest): Promise<void>;
  /** Lease TTL (a killed sweep's lease expires after it). */
  readonly leaseTtlMs: number;
  /** Workspaces backfilled at once within a batch. */
  readonly concurrency: number;
}

export interface SweepResult extends SweepStats {
  readonly source: BackfillSource;
  readonly status: 'completed' | 'continued';
  /** Cursor this run started from (null: from the beginning). */
  readonly resumedFrom: string | null;
  readonly durationMs: number;
}

/** Error details kept in the sweep's counters. */
const ERRORS_KEPT = 50;

// Adds one workspace's outcome to the counters.
function tally(stats: SweepStats, result: BackfillResult): SweepStats {
  return {
    ...stats,
    migrated: stats.migrated + (result.status === 'migrated' ? 1 : 0),
    partial: stats.partial + (result.status === 'partial' ? 1 : 0),
    alreadyMigrated: stats.alreadyMigrated + (result.status === 'already-migrated' ? 1 : 0),
    absent: stats.absent + (result.status === 'absent' ? 1 : 0),
    copiedFiles: stats.copiedFiles + result.copiedFiles,
    copiedBytes: stats.copiedBytes + result.copiedBytes,
  };
}

export async function runSweep(deps: SweepDeps, request: SweepRequest, ctx: ProcessorContext): Promise<SweepResult> {
  const started = Date.now();
  const { source } = request;
  const lease = await SweepLease.acquire(deps.redis, deps.keys, source, { ttlMs: deps.leaseTtlMs, signal: ctx.signal, logger: ctx.logger });
  const signal = anySignal([ctx.signal, lease.signal]);
  const fields = sweepFields(source);
  try {
    const stored = await readSweepState(deps.redis, deps.keys, source);
    const resumedFrom = stored.cursor;
    let stats: SweepStats = stored.stats && resumedFrom ? { ...stored.stats, resumes: stored.stats.resumes + 1 } : freshStats();
    let cursor = resumedFrom;
    const legacy = deps.legacySource(source);
    const pace = createPacer(request.ratePerSec);
    let lastBatchMs = 0;
    for (;;) {
      if (Date.now() + 2 * lastBatchMs + 5_000 > ctx.deadlineAt) {
        await deps.continueLater(request);
        ctx.logger.info({ source, cursor }, 'sweep stopping before its deadline; continuation enqueued');
        return { ...stats, source, status: 'continued', resumedFrom, durationMs: Date.now() - started };
      }
      const batchStarted = Date.now();
      const page = await legacy.listWorkspaces({ after: cursor, limit: request.batch }, signal);
      const migrated = await deps.migrations.migratedAmong(page.workspaceIds);
      const pending = page.workspaceIds.filter((id) => !migrated.has(id));
      stats = { ...stats, alreadyMigrated: stats.alreadyMigrated + migrated.size };
      await mapBounded(
        pending,
        deps.concurrency,
        async (workspaceId) => {
          await pace.wait(signal);
          try {
            const result = await deps.backfillOne(workspaceId, source, signal);
            stats = tally(stats, result);
          } catch (error) {
            if (signal.aborted) throw error;
            const code = isFleetError(error) ? error.code : 'Unexpected';
            const message = error instanceof Error ? error.message : String(error);
            ctx.logger.warn({ err: error, workspaceId }, 'sweep: workspace backfill failed');
            stats = { ...stats, failed: stats.failed + 1, errors: [...stats.errors, { workspaceId, code, message }].slice(-ERRORS_KEPT) };
            if (!isFleetError(error) || error.retryable) await deps.requeue(workspaceId, source);
          }
        },
        signal,
      );
      cursor = page.cursor;
      stats = { ...stats, position: page.position, total: page.total, updatedAt: Date.now() };
      await lease.write({ [fields.cursor]: cursor ?? '', [fields.stats]: JSON.stringify(stats) });
      await ctx.progress({
        step: 'sweep',
        done: page.position,
        total: page.total,
        percent: page.total === 0 ? 100 : Math.floor((page.position / page.total) * 100),
        migrated: stats.migrated,
        failed: stats.failed,
        cursor,
      });
      lastBatchMs = Date.now() - batchStarted;
      if (page.done) break;
    }
    await lease.write({ [fields.last]: JSON.stringify(stats) }, [fields.cursor, fields.stats]);
    return { ...stats, source, status: 'completed', resumedFrom, durationMs: Date.now() - started };
  } finally {
    await lease.release();
  }
}
