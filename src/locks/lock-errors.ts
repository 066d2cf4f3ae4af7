/** Errors of the single-flight lock wrapper. */
import { FleetError } from '../errors/fleet-error.js';

/** The lock is held elsewhere or Redis did not answer within the acquire bound. Retried. */
export class LockUnavailableError extends FleetError {
  readonly code = 'LockUnavailable';
  readonly retryable = true;
}

/** The lock was lost while the routine ran (extension failed or max hold reached). Retried. */
export class LockLostError extends FleetError {
  readonly code = 'LockLost';
  readonly retryable = true;
}
