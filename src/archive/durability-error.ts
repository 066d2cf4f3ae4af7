import { FleetError } from '../errors/fleet-error.js';

/** Thrown when data could not be made durable; the revision is abandoned, never retried in place. */
export class DurabilityError extends FleetError {
  readonly code = 'DurabilityFailed';
  readonly retryable = true;
}
