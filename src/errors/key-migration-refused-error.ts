import { FleetError } from './fleet-error.js';

/**
 * `fleet redis migrate-keys` will not move keys now: fleet processes are still heartbeating, or a
 * queue of the old layout still holds work (its jobs would be stranded under the old names).
 * Nothing was moved. Not retried: stop the fleet or drain the queue first, then run it again.
 */
export class KeyMigrationRefusedError extends FleetError {
  readonly code = 'KeyMigrationRefused';
  readonly retryable = false;
}
