/** One workspace as operators and the HTTP API see it. */
import type { FleetServices } from '../runtime/services.js';
import type { Address } from '../state/address-store.js';
import type { RuntimeResource } from '../state/runtime-store.js';
import type { ActivityView } from '../state/activity-store.js';
import { lagMs } from './persist-lag.js';

export interface WorkspaceView {
  readonly workspaceId: string;
  readonly generation: number;
  readonly address: Address | null;
  readonly runtime: RuntimeResource | null;
  readonly currentRevision: string | null;
  readonly revisions: number;
  /** ms since the newest successful persist run (or since publication); null without a live incarnation. */
  readonly persistLagMs: number | null;
  /** What keeps the workspace from being idle: open turns, running execs and file operations. */
  readonly activity: ActivityView;
}

/** Persist lag of a live incarnation: time since the archive last caught up with it. */
export async function persistLagMs(services: FleetServices, address: Address, now = Date.now()): Promise<number> {
  return lagMs(now, address.publishedAt, await services.intents.status(address.workspaceId));
}

export async function describeWorkspace(services: FleetServices, workspaceId: string): Promise<WorkspaceView> {
  const [address, runtime, generation, head, linked, revisions, activity] = await Promise.all([
    services.addresses.get(workspaceId),
    services.runtime.get(workspaceId),
    services.addresses.generation(workspaceId),
    services.checkpoints.current(workspaceId),
    services.archive.current(workspaceId),
    services.archive.revisions(workspaceId),
    services.activity.view(workspaceId),
  ]);
  return {
    workspaceId,
    generation,
    address,
    runtime,
    currentRevision: head?.workspaceRevision ?? linked,
    revisions: revisions.length,
    persistLagMs: address ? await persistLagMs(services, address) : null,
    activity,
  };
}
