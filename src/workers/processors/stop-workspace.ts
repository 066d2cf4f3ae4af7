/**
 * Stops a workspace's incarnation after an idle reap, if it is still idle (a turn opened or a
 * command started during the flush keeps it running): the runtime record becomes `stopped`
 * (fenced on the generation), checkpoints stop, the sandbox stops (its files stay; a later
 * provision resumes or restores it). Never throws: a failure is logged.
 */
import type { Logger } from '../../logger.js';
import type { FleetServices } from '../../app/services.js';
import { isIdle } from '../../gc/idle-kind.js';

export async function stopWorkspace(services: FleetServices, workspaceId: string, generation: number, signal: AbortSignal, logger: Logger): Promise<void> {
  try {
    const address = await services.addresses.get(workspaceId);
    if (!address || address.generation !== generation) return;
    if (!(await isIdle(services, workspaceId, Date.now() - services.config.idleTtlMs))) {
      logger.info({ workspaceId, generation }, 'idle-reap flushed, but the workspace became active again: not stopped');
      return;
    }
    // Fenced: only a ready incarnation of this generation is recorded as stopped.
    const stopped = await services.runtime.transition(workspaceId, 'stop', generation);
    if (!stopped.applied) {
      logger.info({ workspaceId, generation, runtime: stopped.state, runtimeGeneration: stopped.generation }, 'idle workspace not stopped: its runtime moved on');
      return;
    }
    await services.client.stopCheckpoints(workspaceId);
    await services.providerFor(address).stop(address.handle, signal);
    logger.info({ workspaceId, generation }, 'idle workspace flushed and stopped');
  } catch (error) {
    logger.warn({ err: error, workspaceId }, 'stopping an idle workspace failed');
  }
}
