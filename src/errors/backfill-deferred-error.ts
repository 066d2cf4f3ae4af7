import { FleetError } from './fleet-error.js';

/**
 * Thrown when a workspace cannot be backfilled right now without risking its files: its live
 * incarnation is mid-restore, lives on another host, or its generation moved during the run.
 * Nothing was committed. Retried with backoff (and picked up again by the next sweep).
 */
export class BackfillDeferredError extends FleetError {
  readonly code = 'BackfillDeferred';
  readonly retryable = true;
}
