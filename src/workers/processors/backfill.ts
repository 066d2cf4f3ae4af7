/**
 * `backfill` processor: `{kind:'workspace'}` migrates one workspace from a legacy store into
 * the archive (backfill/backfill-workspace.ts); `{kind:'sweep'}` walks a legacy store and
 * backfills every workspace not yet migrated (backfill/run-sweep.ts).
 */
import { backfillDeps, sweepDeps } from '../../app/backfill-deps.js';
import { backfillWorkspace, type BackfillResult } from '../../backfill/backfill-workspace.js';
import { runSweep, type SweepResult } from '../../backfill/run-sweep.js';
import type { BackfillPayload } from '../../queues/backfill.js';
import type { FleetServices } from '../../app/services.js';
import type { Processor } from '../../jobs/processor-context.js';

export function backfillProcessor(services: FleetServices): Processor<BackfillPayload, BackfillResult | SweepResult> {
  const deps = backfillDeps(services);
  return async (payload, ctx) => {
    if (payload.kind === 'workspace') {
      return backfillWorkspace(deps, { workspaceId: payload.workspaceId, source: payload.source }, ctx);
    }
    const sweep = sweepDeps(services, deps, (workspaceId, source, signal) => backfillWorkspace(deps, { workspaceId, source }, { signal, logger: ctx.logger }));
    return runSweep(sweep, { source: payload.source, batch: payload.batch, ratePerSec: payload.ratePerSec }, ctx);
  };
}
