/** `fleet turn open|close <ws> <turnId>`: a workspace is not idle while one of its turns is open. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { withServices } from '../../app/with-services.js';

export function registerTurn(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const turn = program.command('turn').description('open or close a turn (a workspace with an open turn is never reaped as idle)');
  turn
    .command('open')
    .description('open (or extend) a turn; it expires after --ttl unless closed or opened again')
    .argument('<workspace>', 'workspace id')
    .argument('<turn>', 'turn id')
    .option('--ttl <ms>', 'how long the turn stays open (default FLEET_TURN_TTL_MS)')
    .option('--json', 'print the result as JSON')
    .action((workspaceId: string, turnId: string, opts: { ttl?: string; json?: boolean }) =>
      run(() =>
        withServices(ctx, ['client'], async (services, config) => {
          const result = await services.client.openTurn({ workspaceId, turnId, ttlMs: parseMs('--ttl', opts.ttl, config.turnTtlMs) });
          printResult(ctx.io, Boolean(opts.json), result, () => `${workspaceId}: turn ${turnId} open until ${new Date(result.expiresAt!).toISOString()}`);
          return 0;
        }),
      ),
    );
  turn
    .command('close')
    .description('close a turn: the idle time counts from now')
    .argument('<workspace>', 'workspace id')
    .argument('<turn>', 'turn id')
    .option('--json', 'print the result as JSON')
    .action((workspaceId: string, turnId: string, opts: { json?: boolean }) =>
      run(() =>
        withServices(ctx, ['client'], async (services) => {
          const result = await services.client.closeTurn({ workspaceId, turnId });
          printResult(ctx.io, Boolean(opts.json), result, () => `${workspaceId}: turn ${turnId} closed${result.wasOpen ? '' : ' (it was not open)'}`);
          return 0;
        }),
      ),
    );
}
