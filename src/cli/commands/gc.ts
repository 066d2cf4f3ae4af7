/**
 * `fleet gc [--kind K] [--dry-run]`: run garbage collection (every collecting kind, or one; the
 * `verify` kind is a check and runs only when asked for).
 */
import type { Command } from 'commander';
import type { GcResult } from '../../gc/run-gc.js';
import { UsageError } from '../../errors/usage-error.js';
import { GC_KINDS, type GcKind } from '../../queues/gc.js';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult, table } from '../output.js';
import { withServices } from '../../app/with-services.js';
import { progressBar } from '../progress-bar.js';

export function registerGc(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('gc')
    .description('collect garbage: unattached checkpoints, expired revisions, litter, unreachable objects, old bases, orphan sandboxes, idle workspaces')
    .option('--kind <kind>', `one of ${GC_KINDS.join(', ')} (default: all but verify, and bases only with --dry-run: deleting base snapshots takes --kind bases)`)
    .option('--dry-run', 'only list what would go and the bytes it would reclaim')
    .option('--limit <n>', 'items per kind (max 1000)', '1000')
    .option('--timeout <ms>', 'cap of the wait per kind', '600000')
    .option('--json', 'print the results as JSON')
    .action((opts: { kind?: string; dryRun?: boolean; limit: string; timeout: string; json?: boolean }) =>
      run(async () => {
        if (opts.kind !== undefined && !(GC_KINDS as readonly string[]).includes(opts.kind)) throw new UsageError(`--kind: expected one of ${GC_KINDS.join(', ')}, got ${JSON.stringify(opts.kind)}`);
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) throw new UsageError(`--limit: expected a whole number from 1 to 1000, got ${JSON.stringify(opts.limit)}`);
        const timeoutMs = parseMs('--timeout', opts.timeout, 600_000);
        // Base snapshots are deleted only when asked for by name (`--kind bases`); a plain run lists them with --dry-run.
        const kinds = (opts.kind ? [opts.kind] : GC_KINDS.filter((k) => k !== 'verify' && (opts.dryRun || k !== 'bases'))) as GcKind[];
        return withServices(ctx, ['client'], async (services) => {
          const bar = opts.json ? null : progressBar(ctx.io, opts.dryRun ? 'gc (dry run)' : 'gc');
          const results: GcResult[] = [];
          for (const [i, kind] of kinds.entries()) {
            bar?.update(i, kinds.length, kind);
            const { result } = await services.client.gc({ kind, dryRun: Boolean(opts.dryRun), limit }, { wait: true, timeoutMs });
            results.push(result as GcResult);
          }
          bar?.done();
          printResult(ctx.io, Boolean(opts.json), { dryRun: Boolean(opts.dryRun), results }, () =>
            [
              table(['kind', opts.dryRun ? 'would remove' : 'removed', 'bytes', 'skipped'], results.map((r) => [r.kind, r.count, r.bytes, r.skipped])),
              ...results.filter((r) => Object.keys(r.report ?? {}).length > 0).map((r) => `  ${r.kind}: ${Object.entries(r.report).map(([k, v]) => `${k}=${v}`).join(' ')}`),
              ...results.flatMap((r) => r.items.slice(0, 20).map((item) => `  ${r.kind}: ${item.id} — ${item.description}${item.bytes ? ` (${item.bytes} bytes)` : ''}`)),
              ...results.flatMap((r) => r.invalidIds.slice(0, 20).map((id) => `  ${r.kind}: skipped invalid ${id.field} ${JSON.stringify(id.value)} (${id.reason})`)),
            ].join('\n'),
          );
          return 0;
        });
      }),
    );
}
