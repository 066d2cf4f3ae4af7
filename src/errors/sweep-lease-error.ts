import { FleetError } from './fleet-error.js';

/**
 * Thrown when the backfill sweep lease of a source is held by another sweep (after waiting up
 * to twice its TTL), or when a running sweep lost its lease. Retried: the next attempt resumes
 * from the stored cursor.
 */
export class SweepLeaseError extends FleetError {
  readonly code = 'SweepLease';
  readonly retryable = true;
}
