import { FleetError } from './fleet-error.js';

/**
 * Thrown when a workspace cannot be upgraded to a base version: a migration command or a smoke
 * check failed in its tree (the tree is rolled back to the revision taken before), or it is not
 * running. The workspace stays on its old template version. Not retried.
 */
export class UpgradeFailedError extends FleetError {
  readonly code = 'UpgradeFailed';
  readonly retryable = false;
}
