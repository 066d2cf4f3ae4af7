import { FleetError } from './fleet-error.js';

/**
 * Thrown when the objects GC cannot finish its mark: a revision record that does not parse, or
 * a tree a record reaches that is missing, damaged or unreadable. What lies below such a tree
 * cannot be told apart from garbage, so the run deletes nothing. Not retried: the archive needs
 * an operator (`fleet verify` names the damage); the next scheduled run tries again.
 */
export class GcMarkIncompleteError extends FleetError {
  readonly code = 'GcMarkIncomplete';
  readonly retryable = false;
}
