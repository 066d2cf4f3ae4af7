/**
 * Builds the backfill's and the sweep's dependencies from a process's shared services: the
 * two legacy sources (created once, on first use), the migration store, and the producer calls
 * the sweep needs (requeue a failed workspace, enqueue its own continuation).
 */
import type { FleetServices } from './services.js';
import { MigrationStore } from '../state/migration-store.js';
import type { BackfillDeps } from '../backfill/backfill-workspace.js';
import { BlobLegacySource } from '../backfill/blob-legacy-source.js';
import type { BackfillSource, LegacySource } from '../backfill/legacy-source.js';
import { NativeLegacySource } from '../backfill/native-legacy-source.js';
import type { SweepDeps } from '../backfill/run-sweep.js';

/** Priority of a workspace job handed over by the sweep: behind app read misses (priority 1). */
export const SWEEP_REQUEUE_PRIORITY = 100;

/** The legacy sources of a process. */
export function legacySources(services: FleetServices): (source: BackfillSource) => LegacySource {
  const sources = new Map<BackfillSource, LegacySource>();
  const build = (source: BackfillSource): LegacySource =>
    source === 'blob'
      ? new BlobLegacySource(services.config.paths.legacyRoot)
      : new NativeLegacySource({
          checkpoints: services.checkpoints,
          providers: services.providers,
          defaultProvider: services.config.provider,
          hostId: services.config.hostId,
          knownWorkspaces: () => services.addresses.known(),
        });
  return (source) => {
    let legacy = sources.get(source);
    if (!legacy) sources.set(source, (legacy = build(source)));
    return legacy;
  };
}

/** What `backfillWorkspace` needs, from a process's services. */
export function backfillDeps(services: FleetServices): BackfillDeps {
  return {
    addresses: services.addresses,
    archive: services.archive,
    checkpoints: services.checkpoints,
    hosts: services.hosts,
    hostId: services.config.hostId,
    migrations: new MigrationStore(services.redis, services.keys),
    singleFlight: services.singleFlight,
    systemPath: services.config.systemPath,
    archiveFormat: services.config.archiveFormat,
    storeWriters: services.storeWriters,
    providerFor: services.providerFor,
    legacySource: legacySources(services),
  };
}

/** What `runSweep` needs; `backfillOne` backfills one workspace inline. */
export function sweepDeps(services: FleetServices, backfill: BackfillDeps, backfillOne: SweepDeps['backfillOne']): SweepDeps {
  return {
    redis: services.redis,
    keys: services.keys,
    migrations: backfill.migrations,
    legacySource: backfill.legacySource,
    backfillOne,
    requeue: async (workspaceId, source) => {
      await services.client.backfill({ kind: 'workspace', workspaceId, source }, { priority: SWEEP_REQUEUE_PRIORITY });
    },
    continueLater: async (request) => {
      await services.client.backfill({ kind: 'sweep', ...request });
    },
    // A killed sweep's lease lives as long as its BullMQ job lock would.
    leaseTtlMs: services.config.worker.lockDurationMs,
    concurrency: Math.min(4, services.config.worker.concurrency ?? 4),
  };
}
