/**
 * A process serving a host's persist and hostops queues heartbeats the host as a sandbox host
 * (placement and liveness read it), recounting its running sandboxes every few beats. Never
 * throws: a failed beat is logged and the next one tries again.
 */
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { ProviderRegistry } from '../providers/provider-registry.js';
import type { Isolation } from '../sandbox/isolation.js';
import type { HostRegistry } from '../state/host-registry.js';

export interface SandboxHostHeartbeatDeps {
  readonly config: Pick<Config, 'hostId' | 'hostCapacity'>;
  readonly logger: Logger;
  readonly providers: Pick<ProviderRegistry, 'get'>;
  readonly hosts: Pick<HostRegistry, 'reportSandboxHost'>;
  isolation(): Promise<Isolation>;
}

export async function startSandboxHostHeartbeat(deps: SandboxHostHeartbeatDeps, intervalMs: number): Promise<() => void> {
  const { config, logger } = deps;
  let beats = 0;
  const beat = async () => {
    const recount = beats % 5 === 0;
    beats += 1;
    const sandboxes = recount ? (await deps.providers.get('local').list(AbortSignal.timeout(intervalMs * 2))).filter((s) => s.state === 'running').length : undefined;
    const isolation = (await deps.isolation()).mode;
    await deps.hosts.reportSandboxHost(config.hostId, { capacity: config.hostCapacity, isolation, ...(sandboxes === undefined ? {} : { sandboxes }) });
  };
  await beat();
  const timer = setInterval(() => {
    beat().catch((error: unknown) => logger.warn({ err: error }, 'sandbox host heartbeat failed'));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
