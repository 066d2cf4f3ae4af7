import { FleetError } from './fleet-error.js';

/** Bull Board was asked for while it is off (no FLEET_ADMIN_PASSWORD): 404 saying how to turn it on. */
export class BoardDisabledError extends FleetError {
  readonly code = 'BoardDisabled';
  readonly retryable = false;

  constructor(path: string) {
    super('Bull Board is disabled: set FLEET_ADMIN_PASSWORD (at least 12 characters) to enable it at /admin/queues (user admin)', { context: { path } });
  }
}
