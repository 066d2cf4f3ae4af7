/** Epoch milliseconds of the stores as the API's one timestamp format, ISO 8601 UTC. */
import type { RejectCheckpointResult } from '../producers/reject-checkpoint.js';
import type { TurnResult } from '../producers/turns.js';
import type { WorkspaceView } from '../status/describe-workspace.js';

export const isoOf = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : isoOf(ms));

/** A workspace view with its address's and runtime resource's times in ISO 8601. */
export function isoWorkspaceView(view: WorkspaceView) {
  return {
    ...view,
    address: view.address ? { ...view.address, publishedAt: isoOf(view.address.publishedAt) } : null,
    runtime: view.runtime
      ? { ...view.runtime, expiresAt: isoOrNull(view.runtime.expiresAt), lastUsedAt: isoOrNull(view.runtime.lastUsedAt), createdAt: isoOf(view.runtime.createdAt), updatedAt: isoOf(view.runtime.updatedAt) }
      : null,
  };
}

export const isoTurnResult = (result: TurnResult) => ({ ...result, expiresAt: isoOrNull(result.expiresAt) });

export const isoRejectResult = (result: RejectCheckpointResult) => ({
  ...result,
  current: result.current ? { ...result.current, attachedAt: isoOrNull(result.current.attachedAt) } : null,
});
