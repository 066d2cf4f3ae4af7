/** `fleet enqueue <queue> --data '<json>' [--wait]`: add one job through the typed client. */
import type { Command } from 'commander';
import { createFleetClient } from '../../producers/fleet-client.js';
import type { CliContext } from '../context.js';
import { parseJson, parseMs, parseQueueName } from '../parse.js';
import { printResult } from '../output.js';

export function registerEnqueue(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('enqueue')
    .description('enqueue one job, validated by the queue schema')
    .argument('<queue>', 'provision | persist | checkpoint | backfill | gc | bake')
    .requiredOption('--data <json>', 'job payload as JSON')
    .option('--wait', 'wait for the job result')
    .option('--timeout <ms>', 'cap of --wait in milliseconds', '300000')
    .option('--json', 'print the result as JSON')
    .action((queueArg: string, opts: { data: string; wait?: boolean; timeout: string; json?: boolean }) =>
      run(async () => {
        const queue = parseQueueName('<queue>', queueArg);
        const data = parseJson('--data', opts.data);
        const timeoutMs = parseMs('--timeout', opts.timeout, 300_000);
        const config = await ctx.connectedConfig();
        const client = createFleetClient({ config });
        try {
          const enqueued = await client.enqueue(queue, data, { wait: Boolean(opts.wait), timeoutMs });
          printResult(ctx.io, Boolean(opts.json), enqueued, () =>
            opts.wait ? `${enqueued.queue} job ${enqueued.jobId} completed: ${JSON.stringify(enqueued.result)}` : `${enqueued.queue} job ${enqueued.jobId} enqueued`,
          );
          return 0;
        } finally {
          await client.close();
        }
      }),
    );
}
