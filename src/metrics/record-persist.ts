/**
 * Metrics of one successful persist run, recorded before its requests are acknowledged: the lag
 * it closed (time since the archive last caught up with this incarnation) and, when it wrote a
 * revision, the revision, its bytes and changed files; and the workspace's usage against its quota
 * (a persist never refuses for quota: data first; it marks the workspace over quota instead).
 */
import type { PersistResult } from '../queues/persist.js';
import type { Logger } from '../logger.js';
import type { AddressStore } from '../state/address-store.js';
import type { PersistIntentStore } from '../state/persist-intent.js';
import type { QuotaStore } from '../state/quota-store.js';
import type { MetricsRecorder } from './metrics-recorder.js';
import { persistLagMs } from '../status/persist-lag.js';

export interface RecordPersistDeps {
  readonly addresses: Pick<AddressStore, 'get'>;
  readonly intents: Pick<PersistIntentStore, 'status'>;
  readonly logger: Logger;
  readonly metrics: Pick<MetricsRecorder, 'entriesNotTaken' | 'persistCaughtUp' | 'revisionCommitted'>;
  readonly quota: Pick<QuotaStore, 'measured' | 'limits'>;
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
  if (result.revision) await recordUsage(deps, result);
}

// The revision's files and bytes are the workspace's usage now; crossing the quota is logged.
async function recordUsage(deps: RecordPersistDeps, result: PersistResult): Promise<void> {
  try {
    const change = await deps.quota.measured(result.workspaceId, { bytes: result.bytes, files: result.files });
    const fields = { workspaceId: result.workspaceId, usage: change.usage, limits: deps.quota.limits };
    if (change.isOver && !change.wasOver) deps.logger.warn(fields, 'workspace over quota (persists go on; writes through the API are refused)');
    if (!change.isOver && change.wasOver) deps.logger.info(fields, 'workspace back under quota');
  } catch (error) {
    deps.logger.warn({ err: error, workspaceId: result.workspaceId }, 'quota usage not recorded');
  }
}
