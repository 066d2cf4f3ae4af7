/** `fleet history <ws>`: a workspace's revisions, newest first. */
import type { Command } from 'commander';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import { workspaceHistory } from '../../status/workspace-history.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { withServices } from '../../app/with-services.js';

export function registerHistory(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('history')
    .description("show a workspace's revisions, newest first")
    .argument('<workspace>', 'workspace id')
    .option('--json', 'print the revisions as JSON')
    .action((workspace: string, opts: { json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        return withServices(ctx, ['archive', 'checkpoints'], async (services) => {
          const rows = await workspaceHistory(services, workspaceId);
          printResult(ctx.io, Boolean(opts.json), { workspaceId, revisions: rows }, () =>
            rows.length === 0
              ? `${workspaceId}: no revisions`
              : table(
                  ['revision', 'kind', 'gen', 'reason', 'turn', 'files', 'bytes', 'state', 'created'],
                  rows.map((r) => [r.revision, r.kind, r.generation, r.reason, r.turnId, r.files, r.bytes, r.current ? 'current' : r.attached ? 'attached' : 'unattached', r.createdAt]),
                ),
          );
          return 0;
        });
      }),
    );
}
