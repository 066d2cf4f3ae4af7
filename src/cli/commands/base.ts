/** `fleet base list | activate <id> | rollback <lane> | refs <id>`: the base-snapshot registry. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { withServices } from '../../app/with-services.js';

export function registerBase(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const base = program.command('base').description('list, activate and roll back base snapshots');
  base
    .command('list')
    .description('all base snapshots, newest first')
    .option('--json', 'print as JSON')
    .action((opts: { json?: boolean }) =>
      run(() =>
        withServices(ctx, ['bases'], async (services) => {
          const entries = await services.bases.list();
          printResult(ctx.io, Boolean(opts.json), { bases: entries }, () =>
            entries.length === 0
              ? 'no base snapshots (bake one: fleet bake examples/base-manifest.json --activate --wait)'
              : table(
                  ['snapshot', 'version', 'provider', 'lane', 'status', 'active', 'previous', 'created'],
                  entries.map((e) => [e.snapshotId, e.version, e.provider, e.lane, e.status, e.active ? 'yes' : '', e.previousSnapshotId, new Date(e.createdAt).toISOString()]),
                ),
          );
          return 0;
        }),
      ),
    );
  base
    .command('activate')
    .description('make a ready snapshot the active base of its lane (existing workspaces are untouched)')
    .argument('<snapshot>', 'snapshot id')
    .option('--json', 'print as JSON')
    .action((snapshotId: string, opts: { json?: boolean }) =>
      run(() =>
        withServices(ctx, ['bases'], async (services) => {
          const previous = await services.bases.activate(snapshotId);
          printResult(ctx.io, Boolean(opts.json), { active: snapshotId, previous }, () => `${snapshotId} is active (previous: ${previous ?? 'none'})`);
          return 0;
        }),
      ),
    );
  base
    .command('rollback')
    .description("re-activate the lane's previous base")
    .argument('<lane>', 'lane name')
    .option('--provider <name>', 'local or vercel (default FLEET_PROVIDER)')
    .option('--json', 'print as JSON')
    .action((lane: string, opts: { provider?: string; json?: boolean }) =>
      run(() =>
        withServices(ctx, ['bases'], async (services, config) => {
          const result = await services.bases.rollback(lane, opts.provider ?? config.provider);
          printResult(ctx.io, Boolean(opts.json), result, () => `lane ${lane}: ${result.from} → ${result.to}`);
          return 0;
        }),
      ),
    );
  base
    .command('refs')
    .description('workspaces that started from a snapshot')
    .argument('<snapshot>', 'snapshot id')
    .option('--json', 'print as JSON')
    .action((snapshotId: string, opts: { json?: boolean }) =>
      run(() =>
        withServices(ctx, ['bases'], async (services) => {
          const workspaces = await services.bases.referencedBy(snapshotId);
          printResult(ctx.io, Boolean(opts.json), { snapshotId, workspaces }, () => (workspaces.length ? workspaces.join('\n') : `${snapshotId}: no workspaces`));
          return 0;
        }),
      ),
    );
}
