/** `fleet web`: the HTTP API, Bull Board, /metrics and health endpoints, until a signal. */
import type { Command } from 'commander';
import { installShutdownHandlers } from '../../runtime/shutdown.js';
import type { CliContext } from '../context.js';
import { printResult } from '../output.js';
import { maybeStartTracing } from '../../observability/maybe-start-tracing.js';

export function registerWeb(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('web')
    .description('serve the HTTP API, Bull Board (/admin/queues), /metrics, /healthz and /readyz')
    .option('--json', 'print { url, board } as JSON')
    .action((opts: { json?: boolean }) =>
      run(async () => {
        const config = await ctx.connectedConfig();
        const logger = ctx.logger({ component: 'web', hostId: config.hostId });
        // Loaded on demand: the web stack is heavy for every other command.
        const { startWebServer } = await import('../../app/start-web-server.js');
        const { BOARD_PATH } = await import('../../http/board-path.js');
        const tracing = await maybeStartTracing(config);
        const web = await startWebServer({ config, logger });
        const board = web.board ? `${web.url}${BOARD_PATH}` : null;
        // Handlers first: whoever reads the address may signal us the moment it is printed.
        const exited = new Promise<number>((resolve) => {
          installShutdownHandlers({ logger, deadlineMs: config.shutdown.graceMs, shutdown: () => web.close().finally(() => tracing?.shutdown()), exit: resolve });
        });
        printResult(ctx.io, Boolean(opts.json), { url: web.url, board }, () => `web ${web.url}\nboard ${board ?? 'disabled (set FLEET_ADMIN_PASSWORD to enable Bull Board)'}`);
        return exited;
      }),
    );
}
