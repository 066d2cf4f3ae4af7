import { FleetError } from './fleet-error.js';

/**
 * The live sandbox did not answer within the growing deadlines of every attempt: it is busy, not
 * gone, so it was neither rebuilt nor written around. 503; retry later.
 */
export class WorkspaceBusyError extends FleetError {
  readonly code = 'WorkspaceBusy';
  readonly retryable = true;

  constructor(workspaceId: string, operation: string, attempts: number, cause: unknown) {
    super(`workspace ${workspaceId}: the live sandbox did not answer ${operation} in ${attempts} attempts (busy; not rebuilt)`, { context: { workspaceId, operation, attempts }, cause });
  }
}
