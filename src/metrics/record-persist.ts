/**
 * Metrics of one successful persist run, recorded before its requests are acknowledged: the lag
 * it closed (time since the archive last caught up with this incarnation) and, when it wrote a
 * revision, the revision, its bytes and changed files.
 */
import type { PersistResult } from '../queues/persist.js';
import type { FleetServices } from '../runtime/services.js';
import { persistLagMs } from '../status/describe-workspace.js';

export async function recordPersist(services: FleetServices, reason: string, result: PersistResult): Promise<void> {
  try {
    const address = await services.addresses.get(result.workspaceId);
    if (address && address.generation === result.generation) await services.metrics.persistCaughtUp(await persistLagMs(services, address));
  } catch (error) {
    services.logger.debug({ err: error }, 'persist lag sample skipped');
  }
  if (!result.unchanged && result.revision) await services.metrics.revisionCommitted({ reason, bytes: result.bytes, changedFiles: result.changedFiles });
  await services.metrics.entriesNotTaken(result.refusedEntries ?? 0, result.skippedEntries ?? 0);
}
