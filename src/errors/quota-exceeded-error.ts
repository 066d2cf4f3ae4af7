import { FleetError } from './fleet-error.js';

/**
 * Thrown when a write through the API would take a workspace past its hard quota (507). Never
 * retried: the same write fails again until something is removed or the limit is raised.
 */
export class QuotaExceededError extends FleetError {
  readonly code = 'QuotaExceeded';
  readonly retryable = false;

  constructor(workspaceId: string, what: 'bytes' | 'files', wouldBe: number, limit: number) {
    super(`workspace ${workspaceId} would hold ${wouldBe} ${what}, above its quota of ${limit} (FLEET_WORKSPACE_QUOTA_${what.toUpperCase()})`, { context: { workspaceId, what, wouldBe, limit } });
  }
}
