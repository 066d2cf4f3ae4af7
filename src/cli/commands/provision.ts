/** `fleet provision <ws> [--wait]`: ensure one live sandbox for a workspace. */
import type { Command } from 'commander';
import { createFleetClient } from '../../producers/fleet-client.js';
import type { ProvisionResult } from '../../queues/provision.js';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { progressBar } from '../progress-bar.js';
import { showJobProgress } from '../follow-job.js';

export function registerProvision(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('provision')
    .description('ensure exactly one live sandbox for a workspace (restore by priority)')
    .argument('<workspace>', 'workspace id')
    .option('--provider <name>', 'local or vercel (default FLEET_PROVIDER)')
    .option('--lane <lane>', 'base-snapshot lane for a brand-new workspace', 'default')
    .option('--wait', 'wait for the sandbox')
    .option('--timeout <ms>', 'cap of --wait', '300000')
    .option('--json', 'print { workspaceId, handle, generation, hostId, outcome, source }')
    .action((workspace: string, opts: { provider?: string; lane: string; wait?: boolean; timeout: string; json?: boolean }) =>
      run(async () => {
        const timeoutMs = parseMs('--timeout', opts.timeout, 300_000);
        const config = await ctx.connectedConfig();
        const client = createFleetClient({ config });
        try {
          const bar = opts.wait && !opts.json ? progressBar(ctx.io, `provision ${workspace}`) : null;
          const enqueued = await client.provision(
            { workspaceId: workspace, lane: opts.lane, ...(opts.provider ? { provider: opts.provider as 'local' } : {}) },
            { wait: Boolean(opts.wait), timeoutMs, ...(bar ? { onProgress: (p: unknown) => showJobProgress(bar, p) } : {}) },
          );
          bar?.done();
          const result = enqueued.result as ProvisionResult | undefined;
          printResult(ctx.io, Boolean(opts.json), result ?? enqueued, () =>
            result
              ? `${result.workspaceId}: ${result.outcome}${result.source ? ` from ${result.source}` : ''} → ${result.handle} (generation ${result.generation}, host ${result.hostId})`
              : `provision of ${workspace} enqueued (job ${enqueued.jobId})`,
          );
          return 0;
        } finally {
          await client.close();
        }
      }),
    );
}
