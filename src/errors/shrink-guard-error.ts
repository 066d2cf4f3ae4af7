import { FleetError } from './fleet-error.js';

/** Thrown when a reconcile would remove more than the allowed share of files (use `force`). Never retried. */
export class ShrinkGuardError extends FleetError {
  readonly code = 'ShrinkGuard';
  readonly retryable = false;
}
