/**
 * A process serving a host's persist and hostops queues heartbeats the host as a sandbox host
 * (placement and liveness read it), recounting its running sandboxes every few beats. Never
 * throws: a failed beat is logged and the next one tries again.
 */
import type { FleetServices } from '../app/services.js';

export async function startSandboxHostHeartbeat(services: FleetServices, intervalMs: number): Promise<() => void> {
  const { config, logger } = services;
  let beats = 0;
  const beat = async () => {
    const recount = beats % 5 === 0;
    beats += 1;
    const sandboxes = recount ? (await services.providers.get('local').list(AbortSignal.timeout(intervalMs * 2))).filter((s) => s.state === 'running').length : undefined;
    const isolation = (await services.isolation()).mode;
    await services.hosts.reportSandboxHost(config.hostId, { capacity: config.hostCapacity, isolation, ...(sandboxes === undefined ? {} : { sandboxes }) });
  };
  await beat();
  const timer = setInterval(() => {
    beat().catch((error: unknown) => logger.warn({ err: error }, 'sandbox host heartbeat failed'));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
