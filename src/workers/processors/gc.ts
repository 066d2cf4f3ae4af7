/** `gc` processor: one bounded, logged run of one kind (see gc/run-gc.ts). */
import type { GcDeps } from '../../gc/gc-kind.js';
import { runGc, type GcResult } from '../../gc/run-gc.js';
import type { GcPayload } from '../../queues/gc.js';
import type { Processor } from '../../jobs/processor-context.js';

export function gcProcessor(deps: GcDeps): Processor<GcPayload, GcResult> {
  return (payload, ctx) => runGc(deps, payload, ctx.signal);
}
