import { FleetError } from './fleet-error.js';

/**
 * Thrown at start-up when `FLEET_LOCAL_ISOLATION=namespaces` was asked for but the sandbox
 * probe failed (no bubblewrap, not root, user namespaces off): running the commands uncontained
 * instead would be a silent downgrade, so nothing starts.
 */
export class IsolationUnavailableError extends FleetError {
  readonly code = 'IsolationUnavailable';
  readonly retryable = false;

  constructor(readonly reason: string) {
    super(`FLEET_LOCAL_ISOLATION=namespaces, but sandboxes cannot be made here: ${reason} (install bubblewrap and run as root, or set FLEET_LOCAL_ISOLATION=none for development)`, {
      context: { reason },
    });
  }
}
