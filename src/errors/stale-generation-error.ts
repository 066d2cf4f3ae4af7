import { FleetError } from './fleet-error.js';

/**
 * Thrown when a write carries a generation that is not the workspace's current one: it comes
 * from a replaced incarnation and must never advance state. Never retried.
 */
export class StaleGenerationError extends FleetError {
  readonly code = 'StaleGeneration';
  readonly retryable = false;

  constructor(workspaceId: string, given: number, current: number | null) {
    super(`workspace ${workspaceId}: generation ${given} is stale (current ${current ?? 'none'})`, {
      context: { workspaceId, given, current },
    });
  }
}
