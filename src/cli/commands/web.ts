/** `fleet web`: the HTTP API, Bull Board, /metrics and health endpoints, until a signal. */
import type { Command } from 'commander';
import { startWebServer } from '../../http/start-web-server.js';
import { installShutdownHandlers } from '../../runtime/shutdown.js';
import type { CliContext } from '../context.js';
import { printResult } from '../output.js';

export function registerWeb(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('web')
    .description('serve the HTTP API, Bull Board (/admin/queues), /metrics, /healthz and /readyz')
    .option('--json', 'print { url, board } as JSON')
    .action((opts: { json?: boolean }) =>
      run(async () => {
        const config = await ctx.connectedConfig();
        const logger = ctx.logger({ component: 'web', hostId: config.hostId });
        const web = await startWebServer({ config, logger });
        printResult(ctx.io, Boolean(opts.json), { url: web.url, board: web.board ? `${web.url}/admin/queues` : null }, () => `web ${web.url}`);
        return new Promise<number>((resolve) => {
          installShutdownHandlers({ logger, deadlineMs: config.shutdown.graceMs, shutdown: () => web.close(), exit: resolve });
        });
      }),
    );
}
