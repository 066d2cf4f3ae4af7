/**
 * The narrow dependencies of the persist protocol, built from a process's services (the
 * composition root for `persistWorkspace`; also used by the test and bench harnesses).
 */
import type { PersistDeps } from '../persist/persist-workspace.js';
import type { FleetServices } from './services.js';
import { baseSeedOf } from '../persist/base-seed.js';

export function persistDeps(services: FleetServices): PersistDeps {
  return {
    addresses: services.addresses,
    checkpoints: services.checkpoints,
    archive: services.archive,
    providerFor: services.providerFor,
    shrinkGuardPct: services.config.retention.shrinkGuardPct,
    systemPath: services.config.systemPath,
    treeLimits: services.config.treeLimits,
    archiveFormat: services.config.archiveFormat,
    storeWriters: services.storeWriters,
    statCaches: services.statCaches,
    changeScan: services.config.changeScan,
    seedOf: (workspaceId) => baseSeedOf({ runtime: services.runtime, bases: services.archive.bases }, workspaceId),
  };
}
