/** `fleet worker --queues a,b`: what each Procfile process runs. */
import type { Command } from 'commander';
import { startFleetProcess } from '../../app/fleet-process.js';
import { installShutdownHandlers } from '../../runtime/shutdown.js';
import { assertSystemTools } from '../../system-tools.js';
import type { CliContext } from '../context.js';
import { parseHostList, parseQueueList } from '../parse.js';
import { REMOTE_PROVIDER_HOSTS } from '../../providers/provider-hosts.js';
import { printResult } from '../output.js';
import { maybeStartTracing } from '../../observability/maybe-start-tracing.js';

export function registerWorker(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('worker')
    .description('run workers for some queues (host-bound queues serve FLEET_HOST_ID)')
    .option('--queues <list>', 'comma-separated queues, or "all"', 'all')
    .option('--host <list>', `hosts whose host-bound queues (persist@<host>, checkpoint@<host>) to serve: this host (FLEET_HOST_ID, the default) and/or ${REMOTE_PROVIDER_HOSTS.join(', ')}`)
    .option('--json', 'print the served queues as JSON')
    .action((opts: { queues: string; host?: string; json?: boolean }) =>
      run(async () => {
        const queues = parseQueueList('--queues', opts.queues);
        const config = await ctx.connectedConfig();
        const hosts = parseHostList('--host', opts.host, config.hostId);
        if (queues.some((q) => q === 'persist' || q === 'checkpoint' || q === 'provision' || q === 'backfill')) await assertSystemTools(['rsync'], config.systemPath);
        const logger = ctx.logger({ component: 'worker', hostId: config.hostId });
        const tracing = await maybeStartTracing(config);
        const fleet = await startFleetProcess({ config, queues, hosts, logger });
        printResult(ctx.io, Boolean(opts.json), { queues: fleet.workers.queueNames, worker: fleet.workers.registration.id }, () =>
          `worker ${fleet.workers.registration.id} serving ${fleet.workers.queueNames.join(', ')}`,
        );
        return new Promise<number>((resolve) => {
          installShutdownHandlers({ logger, deadlineMs: config.shutdown.graceMs + config.shutdown.flushMs + 5_000, shutdown: () => fleet.close().finally(() => tracing?.shutdown()), exit: resolve });
        });
      }),
    );
}
