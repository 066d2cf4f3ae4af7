import { FleetError } from './fleet-error.js';

/**
 * Thrown at the admin edge when a state-changing request does not come from the board's own
 * origin: basic-auth credentials are sent by browsers automatically, so same-origin is what
 * stops cross-site request forgery (403).
 */
export class CrossOriginError extends FleetError {
  readonly code = 'CrossOriginRefused';
  readonly retryable = false;
}
