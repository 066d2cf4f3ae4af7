/** `fleet workspace show <ws>` and `fleet workspace reset <ws> --confirm`. */
import type { Command } from 'commander';
import { UsageError } from '../../errors/usage-error.js';
import { resetWorkspace } from '../../provision/reset-workspace.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import { describeWorkspace } from '../../status/describe-workspace.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { withServices } from '../../app/with-services.js';

export function registerWorkspace(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const workspace = program.command('workspace').description('inspect or reset one workspace');
  workspace
    .command('show')
    .description('address, generation, runtime resource, current revision and persist lag')
    .argument('<workspace>', 'workspace id')
    .option('--json', 'print as JSON')
    .action((id: string, opts: { json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, id);
        return withServices(ctx, ['activity', 'addresses', 'archive', 'checkpoints', 'intents', 'runtime'], async (services) => {
          const view = await describeWorkspace(services, workspaceId);
          printResult(ctx.io, Boolean(opts.json), view, () =>
            table(
              ['field', 'value'],
              [
                ['workspace', view.workspaceId],
                ['generation', view.generation],
                ['handle', view.address?.handle],
                ['host', view.address?.hostId],
                ['provider', view.address?.provider],
                ['runtime', view.runtime ? `${view.runtime.state}${view.runtime.error ? ` (${view.runtime.error})` : ''}` : null],
                ['outcome', view.runtime?.outcome],
                ['base', view.runtime?.baseSnapshotVersion],
                ['current', view.currentRevision],
                ['revisions', view.revisions],
                ['persist lag', view.persistLagMs === null ? null : `${view.persistLagMs} ms`],
                ['open turns', view.activity.openTurns.join(', ') || null],
                ['running operations', view.activity.operations],
              ],
            ),
          );
          return 0;
        });
      }),
    );
  workspace
    .command('reset')
    .description('start a workspace over: fence and destroy its sandbox, drop its history (archive moved aside)')
    .argument('<workspace>', 'workspace id')
    .option('--confirm', 'required: this discards the workspace history')
    .option('--json', 'print as JSON')
    .action((id: string, opts: { confirm?: boolean; json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, id);
        if (!opts.confirm) throw new UsageError(`workspace reset ${workspaceId}: add --confirm (the history is moved aside and the sandbox destroyed)`);
        return withServices(ctx, ['addresses', 'archive', 'bases', 'client', 'logger', 'providerFor', 'resets', 'runtime', 'singleFlight'], async (services) => {
          const result = await resetWorkspace(services, workspaceId, AbortSignal.timeout(120_000));
          printResult(ctx.io, Boolean(opts.json), result, () => `${workspaceId}: reset (generation now ${result.generation}; archive ${result.archiveMovedTo ?? 'was empty'})`);
          return 0;
        });
      }),
    );
}
