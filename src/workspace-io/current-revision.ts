/**
 * A workspace's current revision as `GET /v1/workspaces/{id}` names it (`currentRevision`): the
 * attached head checkpoint's, else the archive's `current` link (a workspace whose checkpoint
 * records Redis lost, or whose head is a provider-native snapshot, not an archive revision). The
 * head is the authority: a rejected checkpoint moves it back before the link follows.
 */
import type { ArchiveStore } from '../archive/archive-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';

export interface CurrentRevisionDeps {
  readonly archive: Pick<ArchiveStore, 'current'>;
  readonly checkpoints: Pick<CheckpointStore, 'current'>;
}

/** The current revision; null when the workspace has none yet. */
export async function currentRevision(deps: CurrentRevisionDeps, workspaceId: string): Promise<string | null> {
  const head = await deps.checkpoints.current(workspaceId);
  return head?.kind === 'portable_workspace' ? head.workspaceRevision : await deps.archive.current(workspaceId);
}
