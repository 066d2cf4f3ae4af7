import { FleetError } from './fleet-error.js';

/** Thrown when an operation needs a live incarnation and the address store has none. Never retried. */
export class WorkspaceNotFoundError extends FleetError {
  readonly code = 'WorkspaceNotFound';
  readonly retryable = false;

  constructor(workspaceId: string, what = 'no live sandbox (provision it first)') {
    super(`workspace ${workspaceId}: ${what}`, { context: { workspaceId } });
  }
}
