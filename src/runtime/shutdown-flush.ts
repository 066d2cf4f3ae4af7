/**
 * Shutdown flush (G3): before a worker process that serves this host's persist queue stops, it
 * persists every running workspace living on this host (`reason: shutdown`, reconcile) and waits
 * for them, time-boxed by FLEET_SHUTDOWN_FLUSH_MS. Never throws: what did not finish is logged
 * (the live trees stay on disk, and the next checkpoint or turn catches up).
 */
import type { Logger } from '../logger.js';
import type { FleetClient } from '../producers/fleet-client.js';
import type { ProviderRegistry } from '../providers/provider-registry.js';
import type { AddressStore } from '../state/address-store.js';

export interface ShutdownFlushDeps {
  readonly logger: Logger;
  readonly providers: Pick<ProviderRegistry, 'get'>;
  readonly addresses: Pick<AddressStore, 'get'>;
  readonly client: Pick<FleetClient, 'persist'>;
}

export interface FlushReport {
  readonly flushed: number;
  readonly failed: number;
  readonly total: number;
}

export async function flushHeldWorkspaces(deps: ShutdownFlushDeps, timeoutMs: number): Promise<FlushReport> {
  const { logger } = deps;
  const signal = AbortSignal.timeout(timeoutMs);
  let held: { workspaceId: string; generation: number }[] = [];
  try {
    const sandboxes = await deps.providers.get('local').list(signal);
    for (const sandbox of sandboxes) {
      if (sandbox.state !== 'running') continue;
      const address = await deps.addresses.get(sandbox.workspaceId);
      if (address?.handle === sandbox.handle) held.push({ workspaceId: sandbox.workspaceId, generation: address.generation });
    }
  } catch (error) {
    logger.warn({ err: error }, 'shutdown flush: could not list held workspaces');
    held = [];
  }
  const results = await Promise.allSettled(
    held.map(({ workspaceId, generation }) =>
      deps.client.persist({ workspaceId, generation, delete: true, reason: 'shutdown' }, { wait: true, timeoutMs }),
    ),
  );
  const failed = results.filter((r) => r.status === 'rejected');
  for (const failure of failed) logger.warn({ err: (failure as PromiseRejectedResult).reason }, 'shutdown flush of a workspace did not finish');
  if (held.length > 0) logger.info({ flushed: held.length - failed.length, failed: failed.length }, 'shutdown flush done');
  return { flushed: held.length - failed.length, failed: failed.length, total: held.length };
}
