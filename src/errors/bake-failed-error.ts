import { FleetError } from './fleet-error.js';

/** Thrown when a setup command or smoke check fails: the base is registered `failed`, never activated. */
export class BakeFailedError extends FleetError {
  readonly code = 'BakeFailed';
  readonly retryable = false;
}
