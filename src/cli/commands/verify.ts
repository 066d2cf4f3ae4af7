/**
 * `fleet verify <ws...> | --all [--sample F]`: check the archive against history (every attached
 * checkpoint record and `current` must have an intact revision) and re-hash committed revisions
 * against their manifests. Exit 1 on any problem, with one line per problem.
 */
import type { Command } from 'commander';
import { verifyRevisions } from '../../archive/verify-revisions.js';
import { UsageError } from '../../errors/usage-error.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { progressBar } from '../progress-bar.js';
import { withServices } from '../with-services.js';

export function registerVerify(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('verify')
    .description('check every attached revision and `current` against the archive, re-hash committed revisions; exit 1 on any problem')
    .argument('[workspace...]', 'workspace ids (or --all)')
    .option('--all', 'every workspace in the archive or in Redis')
    .option('--sample <fraction>', 're-hash only this fraction (0..1] of revisions, chosen at random (structure is always checked)', '1')
    .option('--json', 'print the checks and problems as JSON')
    .action((workspaces: string[], opts: { all?: boolean; sample: string; json?: boolean }) =>
      run(async () => {
        const sample = Number(opts.sample);
        if (!(sample > 0 && sample <= 1)) throw new UsageError(`--sample: expected a fraction in (0, 1], got ${JSON.stringify(opts.sample)}`);
        if (workspaces.length === 0 && !opts.all) throw new UsageError('verify: give workspace ids or --all');
        if (workspaces.length > 0 && opts.all) throw new UsageError('verify: give workspace ids or --all, not both');
        const given = workspaces.map((id) => parsePayload('workspace', WorkspaceId, id));
        return withServices(ctx, async (services) => {
          const { archive, checkpoints, addresses } = services;
          const ids = opts.all ? [...new Set([...(await archive.workspaces()), ...(await addresses.known()).filter((id) => WorkspaceId.safeParse(id).success)])].sort() : [...new Set(given)];
          const bar = opts.json ? null : progressBar(ctx.io, 'verify');
          const { checks, problems, attached } = await verifyRevisions({ archive, history: checkpoints }, ids, { sample, onRevision: (_c, done, total) => bar?.update(done, total) });
          bar?.done();
          const mismatched = checks.filter((c) => !c.ok).length;
          printResult(ctx.io, Boolean(opts.json), { revisions: checks.length, mismatched, checks, attached, problems }, () =>
            [
              `${checks.length} revision(s) checked, ${mismatched} with mismatches; ${attached} attached record(s) checked against the archive, ${problems.length} problem(s)`,
              ...(problems.length > 0 ? [table(['workspace', 'revision', 'problem', 'detail'], problems.map((p) => [p.workspaceId, p.revision, p.problem, p.detail]))] : []),
            ].join('\n'),
          );
          return problems.length > 0 ? 1 : 0;
        });
      }),
    );
}
