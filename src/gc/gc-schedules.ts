/**
 * Repeatable GC: one BullMQ job scheduler per kind (`gc:{kind}`), upserted with the full
 * template whenever a process serving the gc queue starts (idempotent), removed when a kind's
 * schedule is `off`. The `bases` schedule is a dry run: it lists base snapshots past retention
 * (in the job's result and log) but deletes nothing; an operator deletes them with
 * `fleet gc --kind bases`.
 */
import { GC, GC_KINDS, gcJobOptions } from '../queues/gc.js';
import type { Config } from '../config.js';
import type { QueuePool } from '../producers/queue-pool.js';

/** Kinds whose scheduled runs only list: deleting a base snapshot is an operator's decision. */
const LIST_ONLY_ON_SCHEDULE: ReadonlySet<string> = new Set(['bases']);

export async function installGcSchedules(pool: QueuePool, config: Config): Promise<Record<string, number | string>> {
  const queue = pool.queue(GC);
  const installed: Record<string, number | string> = {};
  for (const kind of GC_KINDS) {
    const schedule = config.retention.gcSchedule[kind];
    const id = `gc:${kind}`;
    if (schedule === 0) {
      await queue.removeJobScheduler(id);
      continue;
    }
    // A cron pattern (UTC) or milliseconds between runs.
    const repeat = typeof schedule === 'string' ? { pattern: schedule, tz: 'UTC' } : { every: schedule };
    const dryRun = LIST_ONLY_ON_SCHEDULE.has(kind);
    await queue.upsertJobScheduler(id, repeat, { name: GC, data: { kind, dryRun, limit: 1_000 }, opts: { ...gcJobOptions, attempts: 1 } });
    installed[kind] = schedule;
  }
  return installed;
}
