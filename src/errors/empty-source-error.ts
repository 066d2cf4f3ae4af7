import { FleetError } from './fleet-error.js';

/**
 * Thrown when the live tree is missing, not a directory, or empty while the archive holds
 * files: an unmounted or wiped source must never replace the archive (G4). Never retried.
 */
export class EmptySourceError extends FleetError {
  readonly code = 'EmptySource';
  readonly retryable = false;
}
