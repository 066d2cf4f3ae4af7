import { FleetError } from './fleet-error.js';

/**
 * Thrown when a legacy file listed at the start of a backfill is gone, or is no longer a
 * regular file, when it is read (the legacy store changed under the run). Nothing was
 * committed. Retried.
 */
export class LegacyFileVanishedError extends FleetError {
  readonly code = 'LegacyFileVanished';
  readonly retryable = true;

  constructor(workspaceId: string, path: string) {
    super(`workspace ${workspaceId}: legacy file ${JSON.stringify(path)} vanished or is no longer a regular file`, { context: { workspaceId, path } });
  }
}
