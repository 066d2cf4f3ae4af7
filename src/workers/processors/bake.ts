/** `bake` processor: see bake/bake-base.ts. */
import { bakeBase, type BakeResult } from '../../bake/bake-base.js';
import type { BakePayload } from '../../queues/bake.js';
import type { FleetServices } from '../../app/services.js';
import type { Processor } from '../../jobs/processor-context.js';

export function bakeProcessor(services: FleetServices): Processor<BakePayload, BakeResult> {
  return (payload, ctx) => bakeBase(services, payload, ctx);
}
