import { FleetError } from './fleet-error.js';

/**
 * Thrown by backfill when a file copied into a new revision does not hash (or size) like the
 * legacy source says it should: the legacy file changed during the copy, or the copy is torn.
 * Nothing was committed. Retried (a fresh run copies and verifies again).
 */
export class ChecksumMismatchError extends FleetError {
  readonly code = 'ChecksumMismatch';
  readonly retryable = true;

  constructor(workspaceId: string, path: string, expected: string, actual: string) {
    super(`workspace ${workspaceId}: copied file ${JSON.stringify(path)} does not match the legacy source (expected ${expected}, got ${actual})`, {
      context: { workspaceId, path, expected, actual },
    });
  }
}
