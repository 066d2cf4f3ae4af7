/**
 * `fleet verify <ws...> | --all [--sample F] [--read-data-subset P%]`: check the archive against
 * history (every attached checkpoint record and `current` must have an intact revision), re-hash
 * format 1 revisions against their manifests, and check format 2 revisions' trees and objects
 * (every object re-read, or a rotating P % slice of the object id space). Exit 1 on any problem,
 * with one line per problem.
 */
import type { Command } from 'commander';
import { windowLabel, windowWidth, type IdWindow } from '../../archive/id-window.js';
import { knownWorkspaces } from '../../archive/known-workspaces.js';
import { verifyRevisions } from '../../archive/verify-revisions.js';
import { UsageError } from '../../errors/usage-error.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { parsePercent } from '../parse.js';
import { progressBar } from '../progress-bar.js';
import { withServices } from '../../app/with-services.js';

export function registerVerify(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('verify')
    .description('check every attached revision and `current` against the archive, re-hash committed revisions (format 2: every tree and object); exit 1 on any problem')
    .argument('[workspace...]', 'workspace ids (or --all)')
    .option('--all', 'every workspace in the archive or in Redis')
    .option('--sample <fraction>', 're-hash only this fraction (0..1] of format 1 revisions, chosen at random (structure is always checked)', '1')
    .option('--read-data-subset <percent>', 'format 2: re-read only the objects in the next P% of the object id space (rotating across runs; every object is still checked to exist with its size)')
    .option('--json', 'print the checks and problems as JSON')
    .action((workspaces: string[], opts: { all?: boolean; sample: string; readDataSubset?: string; json?: boolean }) =>
      run(async () => {
        const sample = Number(opts.sample);
        if (!(sample > 0 && sample <= 1)) throw new UsageError(`--sample: expected a fraction in (0, 1], got ${JSON.stringify(opts.sample)}`);
        const subset = opts.readDataSubset === undefined ? null : parsePercent('--read-data-subset', opts.readDataSubset);
        if (workspaces.length === 0 && !opts.all) throw new UsageError('verify: give workspace ids or --all');
        if (workspaces.length > 0 && opts.all) throw new UsageError('verify: give workspace ids or --all, not both');
        const given = workspaces.map((id) => parsePayload('workspace', WorkspaceId, id));
        return withServices(ctx, ['addresses', 'archive', 'checkpoints', 'config', 'verifyCursor'], async (services) => {
          const { archive, checkpoints, addresses } = services;
          const ids = opts.all ? await knownWorkspaces(archive, addresses) : [...new Set(given)];
          const readData: IdWindow | undefined = subset === null ? undefined : await services.verifyCursor.claim(windowWidth(subset));
          const bar = opts.json ? null : progressBar(ctx.io, 'verify');
          const result = await verifyRevisions({ archive, history: checkpoints }, ids, {
            sample,
            missingFormat: services.config.archiveFormat,
            ...(readData ? { readData } : {}),
            onRevision: (_c, done, total) => bar?.update(done, total),
          });
          bar?.done();
          const { checks, problems, attached, store } = result;
          const mismatched = checks.filter((c) => !c.ok).length;
          const readDataSubset = readData ? { percent: subset, ...windowLabel(readData) } : null;
          printResult(ctx.io, Boolean(opts.json), { revisions: checks.length, mismatched, checks, attached, store, readDataSubset, problems }, () =>
            [
              `${checks.length} revision(s) checked, ${mismatched} with mismatches; ${attached} attached record(s) checked against the archive, ${problems.length} problem(s)`,
              ...(store.trees > 0 ? [`store: ${store.trees} tree(s) and ${store.objects} object(s) checked, ${store.objectsRead} object(s) re-read (${store.bytesRead} bytes)${readDataSubset ? `; read-data-subset ${subset}%: ids ${readDataSubset.from}..${readDataSubset.to} (the next run continues at ${readDataSubset.to})` : ''}`] : []),
              ...(problems.length > 0 ? [table(['workspace', 'revision', 'problem', 'detail'], problems.map((p) => [p.workspaceId, p.revision, p.problem, p.detail]))] : []),
            ].join('\n'),
          );
          return problems.length > 0 ? 1 : 0;
        });
      }),
    );
}
