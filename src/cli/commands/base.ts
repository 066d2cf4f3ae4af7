/** `fleet base list | activate <id> | rollback <lane> | refs <id>`: the base-snapshot registry. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { withServices } from '../../app/with-services.js';
import { baseViews, laneViews, shortDuration } from '../../status/base-lanes.js';

export function registerBase(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const base = program.command('base').description('list, activate and roll back base snapshots');
  base
    .command('list')
    .description('base snapshots by lane (active, rollback target, candidates), then each one newest first with its workspace references and time since rotation')
    .option('--json', 'print as JSON')
    .action((opts: { json?: boolean }) =>
      run(() =>
        withServices(ctx, ['bases'], async (services) => {
          const entries = await services.bases.list();
          const bases = baseViews(entries, await services.bases.referenceCounts(entries.map((e) => e.snapshotId)), Date.now());
          const lanes = laneViews(entries);
          printResult(ctx.io, Boolean(opts.json), { lanes, bases }, () =>
            entries.length === 0
              ? 'no base snapshots (bake one: fleet bake examples/base-manifest.json --activate --wait)'
              : [
                  table(
                    ['lane', 'active', 'rollback target', 'candidates', 'bases'],
                    lanes.map((l) => [`${l.provider}:${l.lane}`, l.active, l.previous, l.candidates.length === 0 ? '' : l.candidates.join(' '), Object.entries(l.counts).map(([s, n]) => `${n} ${s}`).join(', ')]),
                  ),
                  '',
                  table(
                    ['snapshot', 'version', 'lane', 'status', 'active', 'refs', 'tested', 'rotated out', 'created'],
                    bases.map((e) => [
                      e.snapshotId,
                      e.version,
                      `${e.provider}:${e.lane}`,
                      e.status,
                      e.active ? 'yes' : '',
                      e.references,
                      e.testedAt === null ? 'no' : new Date(e.testedAt).toISOString(),
                      e.sinceRotationMs === null ? '' : `${shortDuration(e.sinceRotationMs)} ago`,
                      new Date(e.createdAt).toISOString(),
                    ]),
                  ),
                ].join('\n'),
          );
          return 0;
        }),
      ),
    );
  base
    .command('activate')
    .description('make a ready (tested) snapshot the active base of its lane (existing workspaces are untouched)')
    .argument('<snapshot>', 'snapshot id')
    .option('--force', 'also activate a candidate: a snapshot never tested in a sandbox made from it (logged)')
    .option('--json', 'print as JSON')
    .action((snapshotId: string, opts: { json?: boolean; force?: boolean }) =>
      run(() =>
        withServices(ctx, ['bases', 'logger'], async (services) => {
          const entry = await services.bases.get(snapshotId);
          const previous = await services.bases.activate(snapshotId, { force: Boolean(opts.force) });
          const forced = Boolean(opts.force) && entry?.status === 'candidate';
          if (forced) services.logger.warn({ snapshotId, previous }, 'activated an untested candidate base (--force): new workspaces start from a snapshot no sandbox has been made from yet');
          printResult(ctx.io, Boolean(opts.json), { active: snapshotId, previous, forced }, () => `${snapshotId} is active${forced ? ' (forced: untested candidate)' : ''} (previous: ${previous ?? 'none'})`);
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
