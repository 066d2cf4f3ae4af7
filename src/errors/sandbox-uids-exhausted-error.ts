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
    /** Under the sharded key layout: the workspace's bucket and the bucket count (its share is every `buckets`-th uid from `first + bucket`). */
    readonly share?: { readonly bucket: number; readonly buckets: number },
  ) {
    const which = share ? `its share (every ${share.buckets}th uid from ${range.first + share.bucket}, key bucket ${share.bucket}) of FLEET_SANDBOX_UID_RANGE ${range.first}-${range.last} is` : `all of FLEET_SANDBOX_UID_RANGE ${range.first}-${range.last} are`;
    super(`no free sandbox uid for ${workspaceId}: ${which} taken (uids are never reused; widen the range)`, {
      context: { workspaceId, first: range.first, last: range.last, ...(share ? { bucket: share.bucket, buckets: share.buckets } : {}) },
    });
  }
}
