/**
 * Repeatable GC: one BullMQ job scheduler per kind (`gc:{kind}`), upserted with the full
 * template whenever a process serving the gc queue starts (idempotent), removed when a kind's
 * schedule is `off`.
 */
import { GC, GC_KINDS, gcJobOptions } from '../queues/gc.js';
import type { Config } from '../config.js';
import type { QueuePool } from '../producers/queue-pool.js';

export async function installGcSchedules(pool: QueuePool, config: Config): Promise<Record<string, number>> {
  const queue = pool.queue(GC);
  const installed: Record<string, number> = {};
  for (const kind of GC_KINDS) {
    const every = config.retention.gcSchedule[kind];
    const id = `gc:${kind}`;
    if (every === 0) {
      await queue.removeJobScheduler(id);
      continue;
    }
    await queue.upsertJobScheduler(id, { every }, { name: GC, data: { kind, dryRun: false, limit: 1_000 }, opts: { ...gcJobOptions, attempts: 1 } });
    installed[kind] = every;
  }
  return installed;
}
