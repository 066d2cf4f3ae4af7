/**
 * Stops a workspace's incarnation after an idle reap, if it is still idle (a turn opened or a
 * command started during the flush keeps it running): the runtime record becomes `stopped`
 * (fenced on the generation), checkpoints stop, the sandbox stops (its files stay; a later
 * provision resumes or restores it). Never throws: a failure is logged.
 */
import type { Logger } from '../../logger.js';
import type { Config } from '../../config.js';
import type { FleetClient } from '../../producers/fleet-client.js';
import type { SandboxProvider } from '../../providers/sandbox-provider.js';
import type { ActivityStore } from '../../state/activity-store.js';
import type { Address, AddressStore } from '../../state/address-store.js';
import type { RuntimeStore } from '../../state/runtime-store.js';
import type { EventStore } from '../../state/event-store.js';
import { isIdle } from '../../gc/idle-kind.js';

export interface StopDeps {
  readonly addresses: Pick<AddressStore, 'get' | 'lastActivity'>;
  readonly activity: Pick<ActivityStore, 'quiescent'>;
  readonly config: Pick<Config, 'idleTtlMs'>;
  readonly runtime: Pick<RuntimeStore, 'transition'>;
  readonly client: Pick<FleetClient, 'stopCheckpoints'>;
  readonly events: Pick<EventStore, 'emit'>;
  providerFor(address: Address): SandboxProvider;
}

export async function stopWorkspace(deps: StopDeps, workspaceId: string, generation: number, signal: AbortSignal, logger: Logger): Promise<void> {
  try {
    const address = await deps.addresses.get(workspaceId);
    if (!address || address.generation !== generation) return;
    if (!(await isIdle(deps, workspaceId, Date.now() - deps.config.idleTtlMs))) {
      logger.info({ workspaceId, generation }, 'idle-reap flushed, but the workspace became active again: not stopped');
      return;
    }
    // Fenced: only a ready incarnation of this generation is recorded as stopped.
    const stopped = await deps.runtime.transition(workspaceId, 'stop', generation);
    if (!stopped.applied) {
      logger.info({ workspaceId, generation, runtime: stopped.state, runtimeGeneration: stopped.generation }, 'idle workspace not stopped: its runtime moved on');
      return;
    }
    await deps.client.stopCheckpoints(workspaceId);
    await deps.providerFor(address).stop(address.handle, signal);
    logger.info({ workspaceId, generation }, 'idle workspace flushed and stopped');
    await deps.events.emit({ type: 'reaped', workspaceId, generation });
  } catch (error) {
    logger.warn({ err: error, workspaceId }, 'stopping an idle workspace failed');
  }
}
