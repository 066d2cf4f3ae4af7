/**
 * `backfill` processor: `{kind:'workspace'}` migrates one workspace from a legacy store into
 * the archive (backfill/backfill-workspace.ts); `{kind:'sweep'}` walks a legacy store and
 * backfills every workspace not yet migrated (backfill/run-sweep.ts).
 */
import { backfillWorkspace, type BackfillDeps, type BackfillResult } from '../../backfill/backfill-workspace.js';
import { runSweep, type SweepDeps, type SweepResult } from '../../backfill/run-sweep.js';
import type { BackfillPayload } from '../../queues/backfill.js';
import type { Processor } from '../../jobs/processor-context.js';

export interface BackfillProcessorDeps {
  readonly backfill: BackfillDeps;
  /** The sweep's deps around a function that backfills one workspace inline. */
  sweep(backfillOne: SweepDeps['backfillOne']): SweepDeps;
}

export function backfillProcessor({ backfill: deps, sweep: sweepOf }: BackfillProcessorDeps): Processor<BackfillPayload, BackfillResult | SweepResult> {
  return async (payload, ctx) => {
    if (payload.kind === 'workspace') {
      return backfillWorkspace(deps, { workspaceId: payload.workspaceId, source: payload.source }, ctx);
    }
    const sweep = sweepOf((workspaceId, source, signal) => backfillWorkspace(deps, { workspaceId, source }, { signal, logger: ctx.logger }));
    return runSweep(sweep, { source: payload.source, batch: payload.batch, ratePerSec: payload.ratePerSec }, ctx);
  };
}
