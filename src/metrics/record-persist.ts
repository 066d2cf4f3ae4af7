/**
 * Metrics of one successful persist run, recorded before its requests are acknowledged: the lag
 * it closed (time since the archive last caught up with this incarnation) and, when it wrote a
 * revision, the revision, its bytes and changed files.
 */
import type { PersistResult } from '../queues/persist.js';
import type { Logger } from '../logger.js';
import type { AddressStore } from '../state/address-store.js';
import type { PersistIntentStore } from '../state/persist-intent.js';
import type { MetricsRecorder } from './metrics-recorder.js';
import { persistLagMs } from '../status/persist-lag.js';

export interface RecordPersistDeps {
  readonly addresses: Pick<AddressStore, 'get'>;
  readonly intents: Pick<PersistIntentStore, 'status'>;
  readonly logger: Logger;
  readonly metrics: Pick<MetricsRecorder, 'entriesNotTaken' | 'persistCaughtUp' | 'revisionCommitted'>;
}

export async function recordPersist(deps: RecordPersistDeps, reason: string, result: PersistResult): Promise<void> {
  try {
    const address = await deps.addresses.get(result.workspaceId);
    if (address && address.generation === result.generation) await deps.metrics.persistCaughtUp(await persistLagMs(deps, address));
  } catch (error) {
    deps.logger.debug({ err: error }, 'persist lag sample skipped');
  }
  if (!result.unchanged && result.revision) await deps.metrics.revisionCommitted({ reason, bytes: result.bytes, changedFiles: result.changedFiles });
  await deps.metrics.entriesNotTaken(result.refusedEntries ?? 0, result.skippedEntries ?? 0);
}
