import { FleetError } from './fleet-error.js';

/**
 * Thrown when an export cannot write a complete, faithful copy of a revision: an object shorter
 * than the size its tree records, an entry of a format 1 revision that cannot be read. Nothing
 * is left at the target. Not retried: the archive itself needs a look (`fleet verify`).
 */
export class ExportFailedError extends FleetError {
  readonly code = 'ExportFailed';
  readonly retryable = false;
}
