import { FleetError } from './fleet-error.js';

/**
 * Thrown when the template overlay of a workspace's base cannot be applied to its new sandbox (over
 * FLEET_BASE_OVERLAY_MAX_BYTES, or a write refused): the workspace is `error`, never `ready`, and
 * its sandbox is kept for debugging (its handle stays on the runtime resource). Not retried.
 */
export class OverlayFailedError extends FleetError {
  readonly code = 'OverlayFailed';
  readonly retryable = false;
}
