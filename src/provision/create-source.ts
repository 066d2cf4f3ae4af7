/**
 * Where a new incarnation's files come from, given the restore plan (restore-plan.ts), with every
 * provider-native snapshot checked at the provider before it is trusted (issue 19.9):
 *
 * - created-from-base: the lane's active base; an expired or deleted one is marked `gone` and
 *   refused (`SnapshotUnavailable`, permanent), never silently replaced by an empty image.
 * - restored-native: the workspace's own snapshot; an expired or deleted one is a
 *   `WorkspaceConflict` (permanent), never a retried "gone".
 * - restored: the archive revision is restored *onto the workspace's own base* (its provenance)
 *   when that base is still usable on the same provider, so what the bake installed outside the
 *   tree (packages, tools) is there again after a rebuild (issue 19.2); otherwise onto an empty
 *   image (logged).
 */
import { SnapshotUnavailableError } from '../providers/snapshot-unavailable-error.js';
import { WorkspaceConflictError } from '../errors/workspace-conflict-error.js';
import type { Logger } from '../logger.js';
import type { CreateSource, ProviderName, SandboxProvider } from '../providers/sandbox-provider.js';
import type { BaseRegistry } from '../state/base-registry.js';
import type { RuntimeResource } from '../state/runtime-store.js';
import type { RestorePlan } from './restore-plan.js';

export interface CreateSourceDeps {
  readonly bases: BaseRegistry;
  readonly logger: Logger;
}

export interface CreateSourceRequest {
  readonly workspaceId: string;
  readonly plan: RestorePlan;
  readonly providerName: ProviderName;
  readonly provider: SandboxProvider;
  /** The workspace's runtime record before this provision (its base provenance). */
  readonly runtime: RuntimeResource | null;
  readonly signal: AbortSignal;
}

export async function createSource(deps: CreateSourceDeps, request: CreateSourceRequest): Promise<CreateSource> {
  const { plan, provider, signal, workspaceId } = request;
  if (plan.outcome === 'created-from-base') {
    const status = await provider.snapshotStatus(plan.source, signal);
    if (status !== 'usable') {
      await deps.bases.markGone(plan.source, `snapshot ${status} at provider ${request.providerName}`);
      throw new SnapshotUnavailableError(request.providerName, 'create', plan.source, status);
    }
    return { type: 'base-snapshot', snapshotId: plan.source };
  }
  if (plan.outcome === 'restored-native') {
    const status = await provider.snapshotStatus(plan.source, signal);
    if (status !== 'usable') {
      throw new WorkspaceConflictError(
        `workspace ${workspaceId}: its provider-native snapshot ${plan.source} is ${status} and it has no archive revision; refusing to recreate it (reset it with \`fleet workspace reset ${workspaceId} --confirm\`)`,
        { context: { workspaceId, snapshotId: plan.source, status } },
      );
    }
    return { type: 'workspace-snapshot', snapshotId: plan.source };
  }
  if (plan.outcome === 'restored') return restoreBase(deps, request);
  return { type: 'empty' };
}

// The workspace's own base to restore the archive onto, when it is still usable on this provider.
async function restoreBase(deps: CreateSourceDeps, request: CreateSourceRequest): Promise<CreateSource> {
  const baseId = request.runtime?.baseSnapshotId;
  if (!baseId) return { type: 'empty' };
  const entry = await deps.bases.get(baseId);
  const why =
    !entry ? 'is not registered'
    : entry.provider !== request.providerName ? `belongs to provider ${entry.provider}`
    : entry.status !== 'ready' ? `is ${entry.status}`
    : null;
  const status = why === null ? await request.provider.snapshotStatus(baseId, request.signal) : null;
  if (why === null && status === 'usable') return { type: 'base-snapshot', snapshotId: baseId };
  if (status !== null && status !== 'usable') await deps.bases.markGone(baseId, `snapshot ${status} at provider ${request.providerName}`);
  deps.logger.warn({ workspaceId: request.workspaceId, baseSnapshotId: baseId, reason: why ?? `snapshot ${status}` }, 'restoring onto an empty image: the workspace base is not usable');
  return { type: 'empty' };
}
