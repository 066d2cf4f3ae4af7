import { FleetError } from './fleet-error.js';

/**
 * Thrown when a known workspace cannot be restored by any source: it is never silently recreated
 * empty or from the base. An operator resets it with `fleet workspace reset <ws> --confirm`.
 */
export class WorkspaceConflictError extends FleetError {
  readonly code = 'WorkspaceConflict';
  readonly retryable = false;
}
