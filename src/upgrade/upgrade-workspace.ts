/**
 * Upgrading one workspace to a base version (`fleet workspace upgrade`): a revision of its tree
 * as it is (reason `upgrade`, the way back), the base's migration commands run in its live tree
 * (allowlisted env, deadline, like `fleet exec`), then the base's smoke checks; all passing, a
 * revision (reason `upgrade`) and the runtime resource's `templateVersion` (a fenced transition of
 * the same generation). Anything failing persists the tree as it is (kept in history: an agent
 * may have written meanwhile), rolls it back to the revision taken before and leaves the template
 * version as it was. Running it again is safe: a workspace already on the
 * version is skipped.
 */
import { commandFailure } from '../lib/command-failure.js';
import { describeFailure } from '../errors/failure-codec.js';
import { UpgradeFailedError } from '../errors/upgrade-failed-error.js';
import type { FleetClient } from '../producers/fleet-client.js';
import type { BaseRegistry } from '../state/base-registry.js';
import type { RuntimeStore } from '../state/runtime-store.js';
import type { WorkspaceIo } from '../workspace-io/workspace-io.js';

export interface UpgradeDeps {
  readonly runtime: Pick<RuntimeStore, 'get' | 'transition'>;
  readonly bases: Pick<BaseRegistry, 'upgradeSteps'>;
  readonly client: Pick<FleetClient, 'persist' | 'rollback'>;
  readonly io: Pick<WorkspaceIo, 'exec'>;
  /** Deadline of one command, and of each persist or rollback waited for. */
  readonly commandTimeoutMs: number;
  readonly jobTimeoutMs: number;
}

export type UpgradeOutcome =
  | { readonly workspaceId: string; readonly outcome: 'upgraded'; readonly from: string | null; readonly to: string; readonly revision: string | null }
  | { readonly workspaceId: string; readonly outcome: 'current'; readonly to: string }
  | {
      readonly workspaceId: string;
      readonly outcome: 'failed';
      readonly from: string | null;
      readonly error: string;
      /** The revision the tree was rolled back to (taken before the upgrade). */
      readonly rolledBackTo: string | null;
      /** The tree as the failure left it, kept in history (`fleet rollback` to it if wanted). */
      readonly failedRevision?: string | null;
    };

// Runs one command in the live tree; a non-zero exit or a timeout is an UpgradeFailedError.
async function step(deps: UpgradeDeps, workspaceId: string, what: string, command: string, signal: AbortSignal): Promise<void> {
  const result = await deps.io.exec({ workspaceId, cmd: ['sh', '-c', command], timeoutMs: deps.commandTimeoutMs, signal });
  if (result.source.kind !== 'live') throw new UpgradeFailedError(`workspace ${workspaceId} has no live sandbox`, { context: { workspaceId, step: what } });
  const failure = commandFailure(what, command, result, 3);
  if (failure !== null) throw new UpgradeFailedError(failure, { context: { workspaceId, step: what, command, exitCode: result.exitCode } });
}

export async function upgradeWorkspace(deps: UpgradeDeps, request: { workspaceId: string; snapshotId: string; version: string }, signal: AbortSignal): Promise<UpgradeOutcome> {
  const { workspaceId, version } = request;
  const runtime = await deps.runtime.get(workspaceId);
  const from = runtime?.templateVersion ?? null;
  if (from === version) return { workspaceId, outcome: 'current', to: version };
  if (!runtime || runtime.state !== 'ready') {
    return { workspaceId, outcome: 'failed', from, error: `UpgradeFailed: workspace ${workspaceId} is ${runtime?.state ?? 'unknown'}, not running: provision it, then upgrade`, rolledBackTo: null };
  }
  const { generation } = runtime;
  const steps = await deps.bases.upgradeSteps(request.snapshotId);
  const wait = { wait: true, timeoutMs: deps.jobTimeoutMs };
  const before = (await deps.client.persist({ workspaceId, generation, delete: true, reason: 'upgrade' }, wait)).result?.revision ?? null;
  try {
    for (const [i, command] of steps.migrate.entries()) await step(deps, workspaceId, `migration command ${i + 1}`, command, signal);
    for (const [i, command] of steps.smoke.entries()) await step(deps, workspaceId, `smoke check ${i + 1}`, command, signal);
  } catch (error) {
    // The tree as the failure left it is kept in history first (an agent may have written
    // meanwhile: nothing is lost, only set aside), then back to the tree before the first command.
    const failedAt = (await deps.client.persist({ workspaceId, generation, delete: true, reason: 'upgrade' }, wait)).result?.revision ?? null;
    if (before !== null) await deps.client.rollback({ workspaceId, revision: before, generation }, wait);
    return { workspaceId, outcome: 'failed', from, error: describeFailure(error), rolledBackTo: before, failedRevision: failedAt };
  }
  const after = (await deps.client.persist({ workspaceId, generation, delete: true, reason: 'upgrade' }, wait)).result?.revision ?? null;
  const recorded = await deps.runtime.transition(workspaceId, 'upgrade', generation, { templateVersion: version });
  if (!recorded.applied) {
    return { workspaceId, outcome: 'failed', from, error: `UpgradeFailed: workspace ${workspaceId} moved on (now ${recorded.state}, generation ${recorded.generation}) while it was upgraded; run the upgrade again`, rolledBackTo: null };
  }
  return { workspaceId, outcome: 'upgraded', from, to: version, revision: after };
}
