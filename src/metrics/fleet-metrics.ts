/**
 * The `/metrics` registry (prom-client). Each scrape reads the fleet once (job counts per queue,
 * live workers, persist lag, the metrics hash the workers write, fence rejections) and the
 * collectors render that snapshot, so the numbers are fleet-wide whichever process serves them.
 */
import { sumOverBuckets } from '../state/buckets.js';
import { Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import { MetricsHash } from '../state/metrics-hash.js';
import { archiveFilesystem, type ArchiveFilesystem } from './archive-filesystem.js';
import { readFleetSnapshot, COUNT_STATES, type FleetStatus } from '../status/fleet-status.js';
import type { LagSummary } from '../status/persist-lag.js';
import { RECORDED_FAMILIES, type RecordedFamily } from './metric-families.js';
import { familyValues, groupFields } from './recorded-series.js';
import { FLEET_VERSION } from '../version.js';

/** The outcomes of `fleet_jobs_total`, each pre-created at 0 per queue. */
const JOB_OUTCOMES = ['completed', 'retry', 'failed'] as const;

// `values` plus a 0 for every queue × outcome it lacks.
function withZeroJobSeries(values: ReturnType<typeof familyValues>, queues: readonly string[]): ReturnType<typeof familyValues> {
  const present = new Set(values.map((v) => `${v.labels.queue}\u0000${v.labels.outcome}`));
  const zeros = queues.flatMap((queue) => JOB_OUTCOMES.filter((outcome) => !present.has(`${queue}\u0000${outcome}`)).map((outcome) => ({ labels: { queue, outcome }, value: 0 })));
  return [...values, ...zeros];
}

export interface FleetMetrics {
  readonly registry: Registry;
  /** Reads the fleet and renders the exposition text. */
  render(): Promise<{ contentType: string; body: string }>;
}

interface Snapshot {
  readonly status: FleetStatus;
  readonly lag: LagSummary;
  readonly hash: Readonly<Record<string, string>>;
  /** Workspaces over their quota now. */
  readonly overQuota: number;
  /** Space on the archive's filesystem (null: statfs failed or timed out). */
  readonly archiveFs: ArchiveFilesystem | null;
}

// A prom-client metric whose values come from the current snapshot.
function snapshotMetric(family: Pick<RecordedFamily, 'name' | 'help' | 'type'>, values: () => ReturnType<typeof familyValues>): Metric {
  const metric = {
    name: family.name,
    help: family.help,
    type: family.type,
    aggregator: 'sum',
    get: async () => ({ name: family.name, help: family.help, type: family.type, aggregator: 'sum', values: values() }),
  };
  return metric as unknown as Metric;
}

export function createFleetMetrics({ redis, keys, config }: { redis: RedisClient; keys: FleetKeys; config: Config }): FleetMetrics {
  const registry = new Registry();
  let snapshot: Snapshot | null = null;
  const current = (): Snapshot => {
    if (!snapshot) throw new Error('fleet metrics rendered without a snapshot');
    return snapshot;
  };

  new Gauge({
    name: 'fleet_queue_jobs',
    help: 'Jobs per BullMQ queue and state (waiting includes prioritized)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [queue, counts] of Object.entries(current().status.byQueue)) {
        for (const state of COUNT_STATES) this.set({ queue, state }, counts[state]);
      }
    },
  });
  new Gauge({
    name: 'fleet_queue_unserved',
    help: 'Waiting (and delayed) jobs of a queue that no live worker serves: alert when above 0 (nothing will ever run them)',
    labelNames: ['queue'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { queue, waiting, delayed } of current().status.unservedQueues) this.set({ queue }, waiting + delayed);
    },
  });
  new Gauge({
    name: 'fleet_queue_oldest_waiting_seconds',
    help: 'How long the oldest waiting job of each BullMQ queue has waited (0 when none waits; of prioritized jobs, the highest and the lowest priority are looked at)',
    labelNames: ['queue'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [queue, ms] of Object.entries(current().status.oldestWaitingMs)) this.set({ queue }, ms / 1000);
    },
  });
  new Gauge({
    name: 'fleet_build_info',
    help: 'Always 1; the labels say which fleet and Node.js versions serve these metrics',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version: FLEET_VERSION, node: process.version }, 1);
  new Gauge({
    name: 'fleet_workers',
    help: 'Live worker processes (heartbeat within three intervals)',
    registers: [registry],
    collect() {
      this.set(current().status.workers);
    },
  });
  new Gauge({
    name: 'fleet_active_workspaces',
    help: 'Workspaces with a live, not stopped incarnation',
    registers: [registry],
    collect() {
      this.set(current().lag.activeWorkspaces);
    },
  });
  new Gauge({
    name: 'fleet_workspaces_over_quota',
    help: 'Workspaces whose last measured usage is above FLEET_WORKSPACE_QUOTA_BYTES or _FILES (persists go on; API writes are refused)',
    registers: [registry],
    collect() {
      this.set(current().overQuota);
    },
  });
  new Gauge({
    name: 'fleet_persist_lag_max_seconds',
    help: 'Largest persist lag over active workspaces right now (G3: at most one turn or 30 s)',
    registers: [registry],
    collect() {
      this.set(current().lag.maxPersistLagMs / 1000);
    },
  });
  // Space on the archive's filesystem; absent when statfs failed.
  const archiveGauges = [
    ['fleet_archive_filesystem_avail_bytes', 'Bytes available to the fleet on the filesystem of FLEET_ARCHIVE_ROOT, as the serving process sees it (absent when statfs fails); a full archive stops every persist', 'availBytes'],
    ['fleet_archive_filesystem_size_bytes', 'Size of the filesystem of FLEET_ARCHIVE_ROOT (absent when statfs fails)', 'sizeBytes'],
  ] as const;
  for (const [name, help, field] of archiveGauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        const fs = current().archiveFs;
        if (fs) this.set(fs[field]);
      },
    });
  }
  registry.registerMetric(
    snapshotMetric({ name: 'fleet_fence_rejections_total', help: 'Writes refused by the generation fence (stale incarnations)', type: 'counter' }, () => [
      { labels: {}, value: current().status.fenceRejections },
    ]),
  );
  for (const family of Object.values(RECORDED_FAMILIES) as RecordedFamily[]) {
    const values = () => familyValues(family, groupFields(current().hash).get(family.name) ?? []);
    // Job outcomes exist from the first scrape for every queue, at 0: rate() and ratios of them work before the first failure.
    registry.registerMetric(snapshotMetric(family, family === RECORDED_FAMILIES.jobs ? () => withZeroJobSeries(values(), Object.keys(current().status.byQueue)) : values));
  }
  collectDefaultMetrics({ register: registry, prefix: 'fleet_web_' });

  // Scrapes run one at a time, so a collector never sees another scrape's snapshot.
  let queue: Promise<unknown> = Promise.resolve();
  const renderOnce = async () => {
    const [{ status, lag }, hash, overQuota, archiveFs] = await Promise.all([
      readFleetSnapshot(redis, keys, config),
      new MetricsHash(redis, keys).read(),
      sumOverBuckets(keys, (b) => redis.zcard(keys.overQuota(b))),
      archiveFilesystem(config.paths.archiveRoot),
    ]);
    snapshot = { status, lag, hash, overQuota, archiveFs };
    return { contentType: registry.contentType, body: await registry.metrics() };
  };
  return {
    registry,
    render() {
      const next = queue.then(renderOnce, renderOnce);
      queue = next.catch(() => undefined);
      return next;
    },
  };
}
