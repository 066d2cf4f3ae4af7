import { FleetError } from './fleet-error.js';

/**
 * Thrown when every uid of `FLEET_SANDBOX_UID_RANGE` belongs to a workspace: uids are never
 * reused, so only a wider range helps (retrying cannot).
 */
export class SandboxUidsExhaustedError extends FleetError {
  readonly code = 'SandboxUidsExhausted';
  readonly retryable = false;

  constructor(
    readonly workspaceId: string,
    readonly range: { readonly first: number; readonly last: number },
  ) {
    super(`no free sandbox uid for ${workspaceId}: all of FLEET_SANDBOX_UID_RANGE ${range.first}-${range.last} are taken (uids are never reused; widen the range)`, {
      context: { workspaceId, first: range.first, last: range.last },
    });
  }
}
