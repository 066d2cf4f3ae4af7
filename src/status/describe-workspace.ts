/** One workspace as operators and the HTTP API see it. */
import type { ArchiveStore } from '../archive/archive-store.js';
import type { ActivityStore } from '../state/activity-store.js';
import type { AddressStore } from '../state/address-store.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import type { PersistIntentStore } from '../state/persist-intent.js';
import type { RuntimeStore } from '../state/runtime-store.js';
import type { Address } from '../state/address-store.js';
import type { RuntimeResource } from '../state/runtime-store.js';
import type { ActivityView } from '../state/activity-store.js';
import { persistLagMs } from './persist-lag.js';

export interface WorkspaceView {
  readonly workspaceId: string;
  readonly generation: number;
  readonly address: Address | null;
  readonly runtime: RuntimeView | null;
  readonly currentRevision: string | null;
  readonly revisions: number;
  /** ms since the newest successful persist run (or since publication); null without a live incarnation. */
  readonly persistLagMs: number | null;
  /** What keeps the workspace from being idle: open turns, running execs and file operations. */
  readonly activity: ActivityView;
}

/** The runtime resource with the last use of the workspace (the activity index: provision, exec, files, turn end). */
export type RuntimeView = RuntimeResource & { readonly lastUsedAt: number | null };

/** What a workspace's status view reads. */
export interface DescribeDeps {
  readonly activity: Pick<ActivityStore, 'view'>;
  readonly addresses: Pick<AddressStore, 'get' | 'generation' | 'lastActivity'>;
  readonly archive: Pick<ArchiveStore, 'current' | 'revisions'>;
  readonly checkpoints: Pick<CheckpointStore, 'current'>;
  readonly intents: Pick<PersistIntentStore, 'status'>;
  readonly runtime: Pick<RuntimeStore, 'get'>;
}

export async function describeWorkspace(deps: DescribeDeps, workspaceId: string): Promise<WorkspaceView> {
  const [address, runtime, generation, head, linked, revisions, activity, lastUsedAt] = await Promise.all([
    deps.addresses.get(workspaceId),
    deps.runtime.get(workspaceId),
    deps.addresses.generation(workspaceId),
    deps.checkpoints.current(workspaceId),
    deps.archive.current(workspaceId),
    deps.archive.revisions(workspaceId),
    deps.activity.view(workspaceId),
    deps.addresses.lastActivity(workspaceId),
  ]);
  return {
    workspaceId,
    generation,
    address,
    runtime: runtime ? { ...runtime, lastUsedAt } : null,
    currentRevision: head?.workspaceRevision ?? linked,
    revisions: revisions.length,
    persistLagMs: address ? await persistLagMs(deps, address) : null,
    activity,
  };
}
