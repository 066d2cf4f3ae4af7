/**
 * The real processors of a process, each given the narrow deps it declares, picked out of the
 * shared services here (the only place that knows both). A queue missing here is served by
 * `notImplemented` (a permanent failure, never a pretend success).
 */
import type { QueueName } from '../queues/index.js';
import type { FleetServices } from './services.js';
import { backfillDeps, sweepDeps } from './backfill-deps.js';
import { persistDeps } from './persist-deps.js';
import { pick } from './pick.js';
import { redisAddress } from '../redis.js';
import type { Processor } from '../jobs/processor-context.js';
import { checkpointProcessor } from '../workers/processors/checkpoint.js';
import { persistProcessor, type PersistProcessorDeps } from '../workers/processors/persist.js';
import { provisionProcessor } from '../workers/processors/provision.js';
import { gcProcessor } from '../workers/processors/gc.js';
import { bakeProcessor } from '../workers/processors/bake.js';
import { backfillProcessor, type BackfillProcessorDeps } from '../workers/processors/backfill.js';
import type { ProvisionProcessorDeps } from '../workers/processors/provision.js';
import type { CheckpointDeps } from '../workers/processors/checkpoint.js';
import type { GcDeps } from '../gc/gc-kind.js';
import type { BakeDeps, BaseSource } from '../bake/bake-base.js';
import { archiveBase, type ArchiveBaseDeps, type BaseFiles } from '../bake/archive-base.js';
import { SNAPSHOT_ID_PATTERN } from '../queues/payload.js';
import type { ProviderName } from '../providers/sandbox-provider.js';
import path from 'node:path';

export function provisionProcessorDeps(s: FleetServices): ProvisionProcessorDeps {
  return pick(s, 'config', 'archive', 'addresses', 'checkpoints', 'redis', 'keys', 'singleFlight', 'runtime', 'hosts', 'bases', 'pendingCreates', 'providers', 'providerFor', 'localProviderOn', 'client');
}

export function persistProcessorDeps(s: FleetServices): PersistProcessorDeps {
  return {
    ...pick(s, 'intents', 'addresses', 'activity', 'config', 'singleFlight', 'logger', 'metrics', 'quota', 'runtime', 'client', 'providerFor', 'events'),
    redisAddress: redisAddress(s.redis),
    queues: s.client.pool,
    persist: persistDeps(s),
    rollback: pick(s, 'addresses', 'archive', 'checkpoints', 'storeWriters', 'config', 'providerFor'),
  };
}

export function checkpointDeps(s: FleetServices): CheckpointDeps {
  return pick(s, 'addresses', 'providerFor', 'client');
}

export function gcDeps(s: FleetServices): GcDeps {
  return pick(s, 'config', 'logger', 'singleFlight', 'activity', 'addresses', 'archive', 'bases', 'checkpoints', 'client', 'pendingCreates', 'providers', 'runtime', 'storeWriters', 'verifyCursor');
}

export function bakeDeps(s: FleetServices): BakeDeps {
  const { archive, storeWriters, config, providers } = s;
  const archiveDeps: ArchiveBaseDeps = { bases: archive.bases, objects: archive.objects, storeWriters, treeLimits: config.treeLimits };
  // Local snapshots are directories of the host that bakes them (snapshot-dir.ts); a remote
  // provider's base is read from a sandbox fresh from it.
  const filesOf = ({ provider, snapshotId, handle }: BaseSource, signal: AbortSignal): BaseFiles | null => {
    if (provider === 'local') return SNAPSHOT_ID_PATTERN.test(snapshotId) ? { kind: 'directory', path: path.join(config.paths.snapshotRoot, snapshotId, 'tree') } : null;
    const remote = providers.get(provider as ProviderName);
    return handle !== null && remote.listTree ? { kind: 'listed', open: () => remote.listTree!(handle, signal) } : null;
  };
  return {
    ...pick(s, 'bases', 'config', 'logger', 'pendingCreates', 'providers', 'singleFlight'),
    archiveBase: config.archiveFormat === 2 ? (source, signal) => archiveBase(archiveDeps, source.snapshotId, filesOf(source, signal), signal) : undefined,
  };
}

export function backfillProcessorDeps(s: FleetServices): BackfillProcessorDeps {
  const backfill = backfillDeps(s);
  return { backfill, sweep: (backfillOne) => sweepDeps(s, backfill, backfillOne) };
}

export function buildProcessors(services: FleetServices): Partial<Record<QueueName, Processor>> {
  return {
    provision: provisionProcessor(provisionProcessorDeps(services)) as Processor,
    persist: persistProcessor(persistProcessorDeps(services)) as Processor,
    checkpoint: checkpointProcessor(checkpointDeps(services)) as Processor,
    gc: gcProcessor(gcDeps(services)) as Processor,
    bake: bakeProcessor(bakeDeps(services)) as Processor,
    backfill: backfillProcessor(backfillProcessorDeps(services)) as Processor,
  };
}
