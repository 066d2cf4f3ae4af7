/** `gc` processor: one bounded, logged run of one kind (see gc/run-gc.ts). */
import { runGc, type GcResult } from '../../gc/run-gc.js';
import type { GcPayload } from '../../queues/gc.js';
import type { FleetServices } from '../../app/services.js';
import type { Processor } from '../../jobs/processor-context.js';

export function gcProcessor(services: FleetServices): Processor<GcPayload, GcResult> {
  return (payload, ctx) => runGc(services, payload, ctx.signal);
}
