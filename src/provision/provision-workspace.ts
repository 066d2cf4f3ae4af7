/**
 * Provisioning: exactly one live sandbox per workspace (G1, G2, G6).
 *
 * Under the `provision:{ws}` single-flight lock (efficiency), it confirms the published
 * incarnation with its provider (busy → retry, never rebuild; gone → rebuild), otherwise bumps
 * the generation to max(store, archive) + 1 *before* anything is created, creates the new
 * incarnation from the source the restore plan picks, restores and marks it ready, and publishes
 * it by compare-and-set (the loser of a race destroys its own sandbox). The fence, not the lock,
 * keeps a stale provisioner from ever publishing or persisting.
 */
import { describeFailure } from '../errors/failure-codec.js';
import { FleetError } from '../errors/fleet-error.js';
import { StaleGenerationError } from '../errors/stale-generation-error.js';
import { WorkspaceConflictError } from '../errors/workspace-conflict-error.js';
import { firstInvalidId } from '../providers/id-rules.js';
import { isProviderError, ProviderBusyError } from '../providers/provider-errors.js';
import type { CreatedSandbox, ProviderName, SandboxInfo, SandboxProvider } from '../providers/sandbox-provider.js';
import type { ProvisionResult } from '../queues/provision.js';
import { restoreWorkspace, type RestoreDeps } from '../restore/restore-workspace.js';
import type { Config } from '../config.js';
import type { ProviderRegistry } from '../providers/provider-registry.js';
import type { FleetClient } from '../producers/fleet-client.js';
import type { SingleFlight } from '../locks/single-flight.js';
import type { BaseRegistry } from '../state/base-registry.js';
import type { HostRegistry } from '../state/host-registry.js';
import type { PendingCreateStore } from '../state/pending-create-store.js';
import type { RuntimeStore } from '../state/runtime-store.js';
import type { Address, AddressStore } from '../state/address-store.js';
import type { ArchiveStore } from '../archive/archive-store.js';
import type { RuntimePatch } from '../state/runtime-store.js';
import type { ProcessorContext } from '../jobs/processor-context.js';
import { createSource } from './create-source.js';
import { applyOverlay } from './apply-overlay.js';
import { OverlayFailedError } from '../errors/overlay-failed-error.js';
import { durableFacts, headRevision, type DurableFactsDeps } from './durable-facts.js';
import { planRestore, type RestoreFacts } from './restore-plan.js';
import { anySignal, deadlineSignal } from '../lib/any-signal.js';

/**
 * Thrown when another provisioner bumped the generation while this one was building an
 * incarnation: ours was destroyed; running the provision again decides afresh (usually
 * `reused`). Retried.
 */
export class ProvisionSupersededError extends FleetError {
  readonly code = 'ProvisionSuperseded';
  readonly retryable = true;
}

/** What provisioning uses: the workspace's records, the providers, and the checkpoint schedule. */
export interface ProvisionDeps extends DurableFactsDeps, RestoreDeps {
  readonly config: Pick<Config, 'hostId' | 'deadlines' | 'baseOverlayMaxBytes'>;
  readonly archive: ArchiveStore;
  readonly addresses: AddressStore;
  readonly singleFlight: Pick<SingleFlight, 'using'>;
  readonly runtime: Pick<RuntimeStore, 'get' | 'transition'>;
  readonly hosts: Pick<HostRegistry, 'isAlive' | 'pickHost'>;
  readonly bases: BaseRegistry;
  readonly pendingCreates: Pick<PendingCreateStore, 'begin' | 'end'>;
  readonly providers: Pick<ProviderRegistry, 'get'>;
  /** The provider of a published incarnation (another host's local sandboxes through its hostops queue). */
  providerFor(address: Address): SandboxProvider;
  /** The local provider of a host. */
  localProviderOn(hostId: string): SandboxProvider;
  readonly client: Pick<FleetClient, 'startCheckpoints' | 'stopCheckpoints'>;
}

export interface ProvisionRequest {
  readonly workspaceId: string;
  readonly provider: ProviderName;
  readonly lane: string;
}

/** Growing per-attempt deadline of provider probes: 2 s, 4 s, 8 s ... capped at 60 s. */
export function probeDeadlineMs(attempt: number): number {
  return Math.min(60_000, 2_000 * 2 ** Math.max(0, attempt - 1));
}

// Confirms the published incarnation with its provider. Busy errors propagate (retry, never rebuild).
async function probeLive(deps: ProvisionDeps, address: Address | null, ctx: ProcessorContext): Promise<(RestoreFacts['live'] & { readonly session: SessionFacts }) | null> {
  if (!address) return null;
  if (!(await deps.hosts.isAlive(address.hostId, address.provider, deps.config.hostId))) return null;
  // On another host this asks that host (hostops queue); a host that does not answer in time is busy.
  const provider = deps.providerFor(address);
  const signal = deadlineSignal(ctx.signal, probeDeadlineMs(ctx.attempt));
  try {
    const info = await provider.get(address.handle, signal);
    if (!info || info.generation !== address.generation) return null;
    const marker = await provider.readReady(address.handle, signal);
    return { state: info.state, ready: marker?.generation === address.generation, session: sessionFacts(info) };
  } catch (error) {
    if (signal.aborted && !ctx.signal.aborted) {
      throw new ProviderBusyError(address.provider, 'get', `no answer within ${probeDeadlineMs(ctx.attempt)} ms`, { cause: error });
    }
    if (isProviderError(error) && error.classification === 'gone') return null;
    throw error;
  }
}

export async function provisionWorkspace(deps: ProvisionDeps, request: ProvisionRequest, ctx: ProcessorContext): Promise<ProvisionResult> {
  const { workspaceId } = request;
  return deps.singleFlight.using(`provision:${workspaceId}`, async (lock) => {
    const signal = anySignal([ctx.signal, lock.signal]);
    const address = await deps.addresses.get(workspaceId);
    const live = await probeLive(deps, address, ctx);

    if (address && live?.ready) {
      const provider = deps.providerFor(address);
      let session = live.session;
      if (live.state === 'stopped') {
        await provider.resume(address.handle, signal);
        // A resume starts a new session: recorded as the provider now reports it.
        const resumed = await provider.get(address.handle, signal).catch(() => null);
        if (resumed) session = sessionFacts(resumed);
      }
      const confirmed = await deps.runtime.transition(workspaceId, 'confirm', address.generation, {
        handle: address.handle,
        hostId: address.hostId,
        provider: address.provider,
        handleKind: provider.handleKind,
        ...session,
      });
      // A newer provisioner bumped the generation meanwhile: decide afresh.
      if (!confirmed.applied) throw ProvisionSuperseded(workspaceId, address.generation, null);
      await deps.client.startCheckpoints(workspaceId, { generation: address.generation });
      await deps.addresses.touch(workspaceId);
      const outcome = live.state === 'stopped' ? 'resumed' : 'reused';
      return { workspaceId, handle: address.handle, generation: address.generation, hostId: address.hostId, provider: address.provider, outcome, source: null };
    }

    const durable = await durableFacts(deps, workspaceId, address);
    // The archive is portable: a restored workspace may move to the requested provider.
    const providerName: ProviderName = request.provider;
    // The lane's active base, even one found gone: seeding from it is checked at the provider and refused.
    const activeBase = await deps.bases.activeEntry(request.lane, providerName);
    const base = activeBase && (activeBase.status === 'ready' || activeBase.status === 'gone') ? { snapshotId: activeBase.snapshotId, version: activeBase.version } : null;
    let plan = planRestore({ live: null, ...durable, base });
    if (plan.outcome === 'conflict') {
      throw new WorkspaceConflictError(
        `workspace ${workspaceId} is known (it was provisioned before or has durable history) but has no restorable revision or snapshot; refusing to recreate it (reset it with \`fleet workspace reset ${workspaceId} --confirm\`)`,
        { context: { workspaceId } },
      );
    }

    // New local sandboxes go to the least-loaded live sandbox host (possibly another one).
    const targetHost = providerName === 'local' ? await deps.hosts.pickHost(deps.config.hostId) : deps.config.hostId;
    const provider = providerName === 'local' ? deps.localProviderOn(targetHost) : deps.providers.get(providerName);
    // Checked before anything changes: a snapshot source that expired or was deleted is refused here.
    const runtime = await deps.runtime.get(workspaceId);
    let source = await createSource({ bases: deps.bases, logger: ctx.logger }, { workspaceId, plan, providerName, provider, runtime, signal });
    // Bump before the replacement starts, above anything the archive has seen (Redis may have lost writes).
    const floor = await deps.archive.maxGeneration(workspaceId);
    // A holder frozen past its lock's validity must not bump over whoever provisioned meanwhile.
    lock.assertHeld();
    const generation = await deps.addresses.bumpGeneration(workspaceId, floor);
    // The bump fences the old incarnation: a persist of it attaches nothing from now on (the
    // attach checks the generation counter). One may have attached since the facts were read,
    // though: a turn acknowledged then would be missing from the restored tree, and the new
    // incarnation's next persist would drop it from the archive. So the head is read again.
    // (The cheap read first; the full facts only when the head moved.)
    const fenced = (await headRevision(deps, workspaceId)) === durable.revision ? durable : await durableFacts(deps, workspaceId, address);
    if (fenced.revision !== durable.revision) {
      ctx.logger.info({ workspaceId, planned: durable.revision, head: fenced.revision }, 'a revision was attached while the provision planned: restoring it instead');
      plan = planRestore({ live: null, ...fenced, base });
      if (plan.outcome === 'conflict') throw ProvisionSuperseded(workspaceId, generation, null);
      source = await createSource({ bases: deps.bases, logger: ctx.logger }, { workspaceId, plan, providerName, provider, runtime, signal });
    }
    const begun = await deps.runtime.transition(workspaceId, 'begin', generation, {
      provider: providerName,
      handle: null,
      handleKind: provider.handleKind,
      currentSessionId: null,
      currentSnapshotId: null,
      hostId: null,
      provisionLockToken: lock.token,
      outcome: null,
      source: null,
      error: null,
      // Provenance, like the base fields: a restored incarnation keeps the runtime it was made with.
      ...(plan.outcome === 'created-from-base' ? { baseSnapshotId: plan.source, baseSnapshotVersion: plan.baseVersion, templateVersion: plan.baseVersion, runtime: activeBase?.runtime || null } : {}),
    });
    if (!begun.applied) throw ProvisionSuperseded(workspaceId, generation, null);
    let created: CreatedSandbox | null = null;
    // Written before the provider call: orphan GC never takes a sandbox of this generation while it lasts.
    await deps.pendingCreates.begin(workspaceId, generation, deps.config.deadlines.provisionMs);
    try {
      // Referenced before the sandbox exists: GC can never retire a base a provision is copying.
      if (plan.outcome === 'created-from-base') await deps.bases.addReference(plan.source, workspaceId);
      await ctx.progress({ step: 'create', percent: 30 });
      created = await provider.create({ workspaceId, generation, hostId: targetHost, source, signal });
      await transitionOrSupersede(deps, workspaceId, 'handle', generation, { handle: created.handle, hostId: created.hostId, currentSessionId: created.sessionId ?? null });
      if (plan.outcome === 'created-from-base') {
        await ctx.progress({ step: 'overlay', percent: 40 });
        await applyOverlay({ bases: deps.bases, maxBytes: deps.config.baseOverlayMaxBytes }, provider, { workspaceId, snapshotId: plan.source, handle: created.handle }, signal);
      }
      await ctx.progress({ step: 'restore', percent: 50 });
      await restoreWorkspace(deps, provider, {
        workspaceId,
        generation,
        handle: created.handle,
        revision: plan.outcome === 'restored' ? plan.source : null,
        signal,
      });
      lock.assertHeld();
      const published = await deps.addresses.publish({ workspaceId, handle: created.handle, generation, hostId: created.hostId, provider: providerName });
      if (!published) {
        await provider.destroy(created.handle, ctx.signal).catch(() => undefined);
        const winner = await deps.addresses.get(workspaceId);
        ctx.logger.warn({ workspaceId, generation, winner: winner?.generation }, 'lost the publish race: destroyed our sandbox');
        // Only a newer, published incarnation is a winner; anything else means a newer provisioner
        // is still at work (or died): decide afresh on the next attempt.
        if (!winner || winner.generation <= generation) throw ProvisionSuperseded(workspaceId, generation, null);
        return { workspaceId, handle: winner.handle, generation: winner.generation, hostId: winner.hostId, provider: winner.provider, outcome: 'reused', source: null };
      }
      await transitionOrSupersede(deps, workspaceId, 'ready', generation, { outcome: plan.outcome, source: plan.source });
      // A replaced incarnation on a dead host is left to that host's janitor when it returns.
      if (address && address.handle !== created.handle && (await deps.hosts.isAlive(address.hostId, address.provider, deps.config.hostId))) {
        await retire(deps, address, ctx);
      }
      // The old host's checkpoint scheduler would tick forever for a workspace that moved.
      if (address && address.hostId !== created.hostId) await deps.client.stopCheckpoints(workspaceId, { hostId: address.hostId }).catch(() => undefined);
      await deps.client.startCheckpoints(workspaceId, { generation });
      await deps.addresses.touch(workspaceId);
      return { workspaceId, handle: created.handle, generation, hostId: created.hostId, provider: providerName, outcome: plan.outcome, source: plan.source };
    } catch (error) {
      // Fenced: only this generation's own provisioning record becomes `error`, never a newer one.
      await deps.runtime.transition(workspaceId, 'fail', generation, { error: describeFailure(error) }).catch(() => undefined);
      // A sandbox whose overlay failed is kept for debugging (its handle stays on the runtime
      // resource; orphan GC takes it once the provision deadline has passed).
      if (created && !(error instanceof OverlayFailedError)) {
        const published = await deps.addresses.get(workspaceId);
        if (published?.handle !== created.handle) await provider.destroy(created.handle, ctx.signal).catch(() => undefined);
      }
      if (error instanceof StaleGenerationError) {
        throw ProvisionSuperseded(workspaceId, generation, error);
      }
      throw error;
    } finally {
      await deps.pendingCreates.end(workspaceId, generation).catch(() => undefined);
    }
  });
}

/** The provider's session facts of an incarnation, as runtime-resource fields (metadata only). */
interface SessionFacts {
  readonly currentSessionId: string | null;
  readonly currentSnapshotId: string | null;
}

function sessionFacts(info: SandboxInfo): SessionFacts {
  return { currentSessionId: info.sessionId ?? null, currentSnapshotId: info.snapshotId ?? null };
}

// The retryable error of a provisioner whose generation was superseded mid-way.
function ProvisionSuperseded(workspaceId: string, generation: number, cause: unknown): ProvisionSupersededError {
  return new ProvisionSupersededError(`workspace ${workspaceId}: generation ${generation} was superseded by another provisioner; retrying decides afresh`, {
    context: { workspaceId, generation },
    cause,
  });
}

// Applies a runtime transition of this provisioner's generation; refused means a newer one took over.
async function transitionOrSupersede(deps: ProvisionDeps, workspaceId: string, name: 'handle' | 'ready', generation: number, patch: RuntimePatch): Promise<void> {
  const result = await deps.runtime.transition(workspaceId, name, generation, patch);
  if (!result.applied) throw ProvisionSuperseded(workspaceId, generation, null);
}

// Destroys a replaced incarnation (best effort: a gone host or sandbox needs nothing).
async function retire(deps: ProvisionDeps, old: Address, ctx: ProcessorContext): Promise<void> {
  // The old address is read back from Redis: only an incarnation of this workspace is destroyed.
  const invalid = firstInvalidId({ workspaceId: old.workspaceId, handle: old.handle });
  if (invalid) {
    ctx.logger.warn({ workspaceId: old.workspaceId, ...invalid }, 'the replaced address names an invalid handle; not destroyed');
    return;
  }
  try {
    const provider: SandboxProvider = deps.providerFor(old);
    await provider.destroy(old.handle, ctx.signal);
  } catch (error) {
    ctx.logger.warn({ err: error, handle: old.handle }, 'could not destroy the replaced incarnation (orphan GC will)');
  }
}
