import { FleetError } from './fleet-error.js';

/** Thrown at the HTTP edge when a request body is not valid JSON (400). */
export class InvalidJsonError extends FleetError {
  readonly code = 'InvalidJson';
  readonly retryable = false;
}
