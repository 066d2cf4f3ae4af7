/** `bake` processor: see bake/bake-base.ts. */
import { bakeBase, type BakeDeps, type BakeResult } from '../../bake/bake-base.js';
import type { BakePayload } from '../../queues/bake.js';
import type { Processor } from '../../jobs/processor-context.js';

export function bakeProcessor(deps: BakeDeps): Processor<BakePayload, BakeResult> {
  return (payload, ctx) => bakeBase(deps, payload, ctx);
}
