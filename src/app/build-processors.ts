/**
 * The real processors of a process, built from the shared services. A queue missing here is
 * served by `notImplemented` (a permanent failure, never a pretend success).
 */
import type { QueueName } from '../queues/index.js';
import type { FleetServices } from './services.js';
import type { Processor } from '../jobs/processor-context.js';
import { checkpointProcessor } from '../workers/processors/checkpoint.js';
import { persistProcessor } from '../workers/processors/persist.js';
import { provisionProcessor } from '../workers/processors/provision.js';
import { gcProcessor } from '../workers/processors/gc.js';
import { bakeProcessor } from '../workers/processors/bake.js';
import { backfillProcessor } from '../workers/processors/backfill.js';

export function buildProcessors(services: FleetServices): Partial<Record<QueueName, Processor>> {
  return {
    provision: provisionProcessor(services) as Processor,
    persist: persistProcessor(services) as Processor,
    checkpoint: checkpointProcessor(services) as Processor,
    gc: gcProcessor(services) as Processor,
    bake: bakeProcessor(services) as Processor,
    backfill: backfillProcessor(services) as Processor,
  };
}
