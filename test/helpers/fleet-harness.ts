// In-process fleet pieces for integration tests: a client and worker processes' runner with
// injected processors, all closed by the leak guard's cleanup.
import type { WorkerOptions } from 'bullmq';
import type { Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createFleetClient, type FleetClient } from '../../src/producers/fleet-client.js';
import type { QueueName } from '../../src/queues/index.js';
import { startFleetProcess, type FleetProcess } from '../../src/app/fleet-process.js';
import type { Processor } from '../../src/jobs/processor-context.js';
import { addCleanup } from './cleanup.js';

export const silentLogger = () => createLogger({ level: 'silent' });

export function testClient(config: Config): FleetClient {
  const client = createFleetClient({ config });
  addCleanup(() => client.close());
  return client;
}

export async function testWorkers(
  config: Config,
  queues: readonly QueueName[],
  processors: Partial<Record<QueueName, Processor>> = {},
  workerOptions: Partial<WorkerOptions> = {},
): Promise<FleetProcess> {
  const fleet = await startFleetProcess({ config, queues, logger: silentLogger(), processors, workerOptions, installSchedules: false });
  addCleanup(() => fleet.close());
  return fleet;
}

/** A promise with its resolver, for gating processors on test events. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
