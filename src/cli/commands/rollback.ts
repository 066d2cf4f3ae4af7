/** `fleet rollback <ws> <revision>`: make an earlier revision's content current again (history kept). */
import type { Command } from 'commander';
import type { RollbackResult } from '../../queues/persist.js';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { withServices } from '../../app/with-services.js';
import { progressBar } from '../progress-bar.js';
import { showJobProgress } from '../follow-job.js';

export function registerRollback(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('rollback')
    .description("make an earlier revision's content the new current revision and restore the live sandbox from it")
    .argument('<workspace>', 'workspace id')
    .argument('<revision>', 'revision id (see fleet history)')
    .option('--wait', 'wait for the rollback')
    .option('--timeout <ms>', 'cap of --wait', '300000')
    .option('--json', 'print the result as JSON')
    .action((workspaceId: string, revision: string, opts: { wait?: boolean; timeout: string; json?: boolean }) =>
      run(async () => {
        const timeoutMs = parseMs('--timeout', opts.timeout, 300_000);
        return withServices(ctx, ['client'], async (services) => {
          const bar = opts.wait && !opts.json ? progressBar(ctx.io, `rollback ${workspaceId}`) : null;
          const enqueued = await services.client.rollback({ workspaceId, revision }, { wait: Boolean(opts.wait), timeoutMs, ...(bar ? { onProgress: (p: unknown) => showJobProgress(bar, p) } : {}) });
          bar?.done();
          const result = enqueued.result as RollbackResult | undefined;
          printResult(ctx.io, Boolean(opts.json), result ?? enqueued, () =>
            result ? `${workspaceId}: revision ${result.revision} now holds the content of ${result.restoredFrom} (${result.files} files); live tree restored` : `rollback of ${workspaceId} enqueued (job ${enqueued.jobId})`,
          );
          return 0;
        });
      }),
    );
}
