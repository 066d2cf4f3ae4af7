/** `fleet workspace list`, `fleet workspace show <ws>`, `fleet workspace reset <ws> --confirm` and `fleet workspace upgrade`. */
import type { Command } from 'commander';
import { UsageError } from '../../errors/usage-error.js';
import { resetWorkspace } from '../../provision/reset-workspace.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import { describeWorkspace } from '../../status/describe-workspace.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { withServices } from '../../app/with-services.js';
import { listWorkspaces } from '../../status/list-workspaces.js';
import { parseCount } from '../parse.js';
import { progressBar } from '../progress-bar.js';
import { buildWorkspaceIo, WORKSPACE_IO_SERVICES } from '../../app/build-workspace-io.js';
import { upgradeWorkspace, type UpgradeOutcome } from '../../upgrade/upgrade-workspace.js';

export function registerWorkspace(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const workspace = program.command('workspace').description('list the workspaces, inspect, reset or upgrade one');
  workspace
    .command('list')
    .description('the workspaces the fleet knows, by id: generation, live sandbox (handle, host, provider), last activity')
    .option('--limit <n>', 'page size (1-1000)', '100')
    .option('--cursor <id>', 'start after this workspace id (the nextCursor of the previous page)')
    .option('--json', 'print { workspaces: [{ workspaceId, generation, address, lastActivity }], nextCursor } (times in ISO 8601)')
    .addHelpText('after', '\nExamples:\n  fleet workspace list\n  fleet workspace list --limit 500 --json | jq -r \'.data.workspaces[].workspaceId\'\n  fleet workspace list --cursor ws-0500')
    .action((opts: { limit: string; cursor?: string; json?: boolean }) =>
      run(async () => {
        const limit = parseCount('--limit', opts.limit, 1, 1_000);
        const cursor = opts.cursor === undefined ? undefined : parsePayload('--cursor', WorkspaceId, opts.cursor);
        return withServices(ctx, ['addresses'], async (services) => {
          const listing = await listWorkspaces(services.addresses, { limit, ...(cursor === undefined ? {} : { cursor }) });
          const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());
          const data = {
            workspaces: listing.workspaces.map((w) => ({ ...w, address: w.address ? { ...w.address, publishedAt: iso(w.address.publishedAt) } : null, lastActivity: iso(w.lastActivity) })),
            nextCursor: listing.nextCursor,
          };
          printResult(ctx.io, Boolean(opts.json), data, () =>
            [
              data.workspaces.length === 0
                ? 'no workspaces'
                : table(
                    ['workspace', 'generation', 'handle', 'host', 'provider', 'last activity'],
                    data.workspaces.map((w) => [w.workspaceId, w.generation, w.address?.handle, w.address?.hostId, w.address?.provider, w.lastActivity]),
                  ),
              ...(data.nextCursor ? [`more: fleet workspace list --cursor ${data.nextCursor}`] : []),
            ].join('\n'),
          );
          return 0;
        });
      }),
    );
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
  workspace
    .command('upgrade')
    .description("run a base version's migration commands and smoke checks in a workspace's live tree, persist it (reason upgrade) and record the new template version; on failure roll the tree back and keep the old version")
    .argument('[workspace]', 'workspace id (or --all)')
    .requiredOption('--to <version>', 'base version to upgrade to (`fleet base list`: a ready base)')
    .option('--all', 'every workspace the fleet knows that is not on that version yet (resumable: run it again after a stop)')
    .option('--json', 'print { to, upgraded, current, failed } as JSON')
    .addHelpText('after', '\nExamples:\n  fleet workspace upgrade ws-1 --to node-base-3f2a9c1d04be\n  fleet workspace upgrade --all --to node-base-3f2a9c1d04be --json')
    .action((workspace: string | undefined, opts: { to: string; all?: boolean; json?: boolean }) =>
      run(async () => {
        if ((workspace === undefined) === !opts.all) throw new UsageError('workspace upgrade: give a workspace id or --all (not both)');
        const one = workspace === undefined ? null : parsePayload('workspace', WorkspaceId, workspace);
        return withServices(ctx, [...WORKSPACE_IO_SERVICES, 'bases', 'runtime'], async (services, config) => {
          const target = (await services.bases.list()).find((b) => b.version === opts.to && b.status === 'ready');
          if (!target) throw new UsageError(`--to: no ready base has version ${JSON.stringify(opts.to)} (see fleet base list)`);
          const ids = one ? [one] : await services.addresses.known();
          const deps = {
            runtime: services.runtime,
            bases: services.bases,
            client: services.client,
            io: buildWorkspaceIo(services),
            commandTimeoutMs: config.deadlines.execMs,
            jobTimeoutMs: config.deadlines.persistMs * 2,
          };
          const bar = opts.json ? null : progressBar(ctx.io, `upgrade to ${target.version}`);
          const outcomes: UpgradeOutcome[] = [];
          for (const [i, workspaceId] of ids.entries()) {
            bar?.update(i, ids.length, workspaceId);
            outcomes.push(await upgradeWorkspace(deps, { workspaceId, snapshotId: target.snapshotId, version: target.version }, AbortSignal.timeout(config.deadlines.persistMs * 4 + config.deadlines.execMs * 20)));
          }
          bar?.done();
          const of = <K extends UpgradeOutcome['outcome']>(k: K) => outcomes.filter((o): o is Extract<UpgradeOutcome, { outcome: K }> => o.outcome === k);
          const data = { to: target.version, upgraded: of('upgraded'), current: of('current').map((o) => o.workspaceId), failed: of('failed') };
          printResult(ctx.io, Boolean(opts.json), data, () =>
            [
              `${data.upgraded.length} upgraded to ${target.version}, ${data.current.length} already on it, ${data.failed.length} failed`,
              ...data.failed.map((f) => `  failed ${f.workspaceId} (stays on ${f.from ?? 'no version'}${f.rolledBackTo ? `, tree rolled back to ${f.rolledBackTo}` : ''}): ${f.error.split('\n')[0]}`),
            ].join('\n'),
          );
          return data.failed.length > 0 ? 1 : 0;
        });
      }),
    );
}
