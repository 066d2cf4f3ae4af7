import { FleetError } from './fleet-error.js';

/**
 * Thrown by persist when the live tree has no ready marker for the job's generation: it was
 * never completely restored (or a restore was interrupted), so it must not become a revision.
 * Never retried.
 */
export class NotReadyError extends FleetError {
  readonly code = 'NotReady';
  readonly retryable = false;

  constructor(workspaceId: string, generation: number, marker: number | null) {
    super(`workspace ${workspaceId}: live tree is not ready for generation ${generation} (marker: ${marker ?? 'none'}); refusing to persist`, {
      context: { workspaceId, generation, marker },
    });
  }
}
