/** `fleet verify <ws> | --all [--sample F]`: re-hash committed revisions against their manifests. */
import type { Command } from 'commander';
import { verifyRevisions } from '../../archive/verify-revisions.js';
import { UsageError } from '../../errors/usage-error.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { ArchiveStore } from '../../archive/archive-store.js';
import { progressBar } from '../progress-bar.js';

export function registerVerify(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('verify')
    .description('recompute the hashes of committed revisions and report mismatches (exit 1 on any)')
    .argument('[workspace]', 'workspace id (or --all)')
    .option('--all', 'every workspace in the archive')
    .option('--sample <fraction>', 'check only this fraction (0..1] of revisions, chosen at random', '1')
    .option('--json', 'print the checks as JSON')
    .action((workspace: string | undefined, opts: { all?: boolean; sample: string; json?: boolean }) =>
      run(async () => {
        const sample = Number(opts.sample);
        if (!(sample > 0 && sample <= 1)) throw new UsageError(`--sample: expected a fraction in (0, 1], got ${JSON.stringify(opts.sample)}`);
        if (!workspace && !opts.all) throw new UsageError('verify: give a workspace id or --all');
        const config = ctx.config();
        const archive = new ArchiveStore(config.paths.archiveRoot);
        const ids = opts.all ? await archive.workspaces() : [parsePayload('workspace', WorkspaceId, workspace)];
        const bar = opts.json ? null : progressBar(ctx.io, 'verify');
        const checks = await verifyRevisions(archive, ids, { sample, onRevision: (_c, done, total) => bar?.update(done, total) });
        bar?.done();
        const bad = checks.filter((c) => !c.ok);
        printResult(ctx.io, Boolean(opts.json), { revisions: checks.length, mismatched: bad.length, checks }, () =>
          [
            `${checks.length} revision(s) checked, ${bad.length} with mismatches`,
            ...(bad.length > 0 ? [table(['workspace', 'revision', 'problems'], bad.map((c) => [c.workspaceId, c.revision, c.mismatches.slice(0, 5).map((m) => `${m.problem}:${m.path}`).join(' ') || 'manifest hash']))] : []),
          ].join('\n'),
        );
        return bad.length > 0 ? 1 : 0;
      }),
    );
}
