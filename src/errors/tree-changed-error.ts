import { FleetError } from './fleet-error.js';

/**
 * Thrown when the source tree changed under a persist in a way that would make the revision
 * torn: its root was removed or replaced, or more entries vanished between listing and copying
 * than a live tree loses in normal work. Nothing is committed; retried.
 */
export class TreeChangedError extends FleetError {
  readonly code = 'TreeChanged';
  readonly retryable = true;
}
