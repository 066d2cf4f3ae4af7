/**
 * The host janitor: a process serving a host's persist queue periodically destroys that host's
 * orphan sandboxes (not named by the address store, older than the provision deadline). GC jobs
 * run on any host and can only see their own host's directories, so each host sweeps its own.
 * Never throws; a run that cannot get the `gc:orphans` lock is simply skipped.
 */
import { runGc } from '../gc/run-gc.js';
import type { GcDeps } from '../gc/gc-kind.js';

export function startHostJanitor(deps: GcDeps, intervalMs: number): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    runGc(deps, { kind: 'orphans', dryRun: false, limit: 100 }, AbortSignal.timeout(Math.max(10_000, intervalMs)))
      .then((result) => {
        if (result.count > 0) deps.logger.info({ removed: result.count }, 'host janitor destroyed orphan sandboxes');
      })
      .catch((error: unknown) => deps.logger.debug({ err: error }, 'host janitor run skipped'))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
