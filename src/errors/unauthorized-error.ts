import { FleetError } from './fleet-error.js';

/** Thrown at the HTTP edge when a request carries no credentials or wrong ones (401). */
export class UnauthorizedError extends FleetError {
  readonly code = 'Unauthorized';
  readonly retryable = false;
}
