import { FleetError } from './fleet-error.js';

/**
 * Thrown when a format 1 revision converted to format 2 does not list what its manifest says
 * (a path missing or extra, another type, mode, size, content or target), or its manifest cannot
 * be trusted. That revision is left as it was (no record, nothing removed, `current` untouched);
 * the others go on. Not retried: the revision or its manifest is damaged (`fleet verify` names it).
 */
export class MigrationMismatchError extends FleetError {
  readonly code = 'MigrationMismatch';
  readonly retryable = false;
}
