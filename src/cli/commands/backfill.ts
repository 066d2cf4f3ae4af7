/**
 * `fleet backfill <ws>`: migrate one workspace from a legacy store into the archive.
 * `fleet backfill sweep`: enqueue the sweep over every legacy workspace not yet migrated
 * (`--wait` follows its progress). `fleet backfill status`: the sweep's cursor, lease and
 * counters. Common options (`--source`, `--wait`, `--timeout`, `--json`) belong to `backfill`
 * itself and may appear anywhere after it.
 */
import type { Command } from 'commander';
import { BACKFILL, BACKFILL_SOURCES, BackfillPayload, WorkspaceId, backfillDeduplication, parsePayload, type BackfillInput } from '../../queues/index.js';
import { readSweepLease } from '../../state/sweep-lease.js';
import { readSweepState } from '../../state/sweep-state.js';
import type { BackfillResult } from '../../backfill/backfill-workspace.js';
import type { SweepResult } from '../../backfill/run-sweep.js';
import type { BackfillSource } from '../../backfill/legacy-source.js';
import { MigrationStore } from '../../state/migration-store.js';
import { UsageError } from '../../errors/usage-error.js';
import type { CliContext } from '../context.js';
import { followJob } from '../follow-job.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { progressBar } from '../progress-bar.js';
import { withServices } from '../../app/with-services.js';
import type { FleetServices } from '../../app/services.js';

interface CommonOptions {
  source: string;
  wait?: boolean;
  timeout?: string;
  json?: boolean;
}

type Run = (action: () => Promise<number>) => Promise<void>;

// `--source` → a backfill source.
function parseSource(raw: string): BackfillSource {
  if (!(BACKFILL_SOURCES as readonly string[]).includes(raw)) throw new UsageError(`--source: expected one of ${BACKFILL_SOURCES.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as BackfillSource;
}

// A positive number flag.
function parseNumber(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new UsageError(`${flag}: expected a positive number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

// The dedup id of a backfill request (a sweep's continuation holds it).
function dedupIdOf(payload: BackfillInput): string {
  return backfillDeduplication(parsePayload('backfill payload', BackfillPayload, payload)).id;
}

// Enqueues a backfill job and, with --wait, follows it to its result.
async function enqueueAndFollow<R>(services: Pick<FleetServices, 'client'>, ctx: CliContext, label: string, payload: BackfillInput, opts: CommonOptions, defaultTimeoutMs: number): Promise<{ jobId: string; result?: R }> {
  const timeoutMs = parseMs('--timeout', opts.timeout, defaultTimeoutMs);
  const client = services.client;
  const events = opts.wait ? await client.pool.events(BACKFILL) : null;
  const { jobId } = await client.backfill(payload);
  if (!events) return { jobId };
  const bar = progressBar(ctx.io, label);
  const result = await followJob<R>({ queue: client.pool.queue(BACKFILL), events, jobId, bar, timeoutMs, continuationDedupId: dedupIdOf(payload) });
  bar.done();
  return { jobId, result };
}

// Human line for one workspace's result.
function describeWorkspace(r: BackfillResult): string {
  if (r.status !== 'migrated' && r.status !== 'partial') return `${r.workspaceId}: ${r.status}`;
  const extra = [r.liveFiles ? `${r.liveFiles} written live` : '', r.skipped.length ? `${r.skipped.length} skipped` : '', r.conflicts.length ? `${r.conflicts.length} conflicts` : '', r.pending.length ? `${r.pending.length} pending (not UTF-8, workspace live)` : ''].filter(Boolean);
  return `${r.workspaceId}: ${r.status === 'migrated' ? 'migrated' : 'partly migrated'} from ${r.source} (revision ${r.revision ?? 'none'}, ${r.copiedFiles} files / ${r.copiedBytes} bytes copied, ${r.archivedFiles} already archived${extra.length ? `, ${extra.join(', ')}` : ''})`;
}

// Human line for a sweep's result.
function describeSweep(r: SweepResult): string {
  return `sweep ${r.source}: ${r.status}: ${r.position}/${r.total} workspaces, ${r.migrated} migrated, ${r.partial} partly, ${r.alreadyMigrated} already migrated, ${r.absent} absent, ${r.failed} failed, ${r.copiedFiles} files / ${r.copiedBytes} bytes copied, ${r.resumes} resumes, ${r.durationMs} ms`;
}

export function registerBackfill(program: Command, ctx: CliContext, run: Run): void {
  const backfill = program
    .command('backfill')
    .description('migrate workspaces from a legacy store into the archive (one workspace, or `sweep` them all)')
    .argument('[workspace]', 'workspace id to backfill')
    .option('--source <source>', `legacy store: ${BACKFILL_SOURCES.join(' | ')}`, 'blob')
    .option('--wait', 'wait for the result (a sweep shows a progress bar)')
    .option('--timeout <ms>', 'cap of --wait in milliseconds')
    .option('--json', 'print the result as JSON')
    .action((workspace: string | undefined, opts: CommonOptions) =>
      run(async () => {
        if (workspace === undefined) throw new UsageError('backfill: give a workspace id, or `sweep` / `status`');
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        const source = parseSource(opts.source);
        return withServices(ctx, ['client'], async (services) => {
          const out = await enqueueAndFollow<BackfillResult>(services, ctx, `backfill ${workspaceId}`, { kind: 'workspace', workspaceId, source }, opts, 300_000);
          printResult(ctx.io, Boolean(opts.json), out.result ?? out, () => (out.result ? describeWorkspace(out.result) : `backfill of ${workspaceId} enqueued (job ${out.jobId})`));
          return 0;
        });
      }),
    );

  backfill
    .command('sweep')
    .description('backfill every legacy workspace not yet migrated: lease-gated, throttled, resumable')
    .option('--batch <n>', 'workspaces per batch (the cursor advances per batch)')
    .option('--rate <r>', 'workspaces started per second')
    .action((opts: { batch?: string; rate?: string }, command: Command) =>
      run(async () => {
        const all = { ...command.optsWithGlobals<CommonOptions>(), ...opts };
        const source = parseSource(all.source);
        const batch = parseNumber('--batch', all.batch);
        const ratePerSec = parseNumber('--rate', all.rate);
        return withServices(ctx, ['client'], async (services) => {
          const payload = { kind: 'sweep' as const, source, ...(batch === undefined ? {} : { batch }), ...(ratePerSec === undefined ? {} : { ratePerSec }) };
          const out = await enqueueAndFollow<SweepResult>(services, ctx, `sweep ${source}`, payload, all, 24 * 3_600_000);
          printResult(ctx.io, Boolean(all.json), out.result ?? out, () => (out.result ? describeSweep(out.result) : `sweep of ${source} enqueued (job ${out.jobId}); follow it with \`fleet backfill status\``));
          return 0;
        });
      }),
    );

  backfill
    .command('status')
    .description("show the sweep's cursor, lease and counters, and how many workspaces are migrated")
    .action((_opts: unknown, command: Command) =>
      run(async () => {
        const all = command.optsWithGlobals<CommonOptions>();
        const source = parseSource(all.source);
        return withServices(ctx, ['client', 'keys', 'redis'], async (services) => {
          const state = await readSweepState(services.redis, services.keys, source);
          const lease = await readSweepLease(services.redis, services.keys, source);
          const queue = services.client.pool.queue(BACKFILL);
          const jobId = await queue.getDeduplicationJobId(dedupIdOf({ kind: 'sweep', source }));
          const job = jobId ? await queue.getJob(jobId) : null;
          const status = {
            source,
            migrated: await new MigrationStore(services.redis, services.keys).count(),
            cursor: state.cursor,
            lease,
            job: job ? { id: job.id, state: await job.getState(), progress: job.progress } : null,
            current: state.stats,
            last: state.last,
          };
          printResult(ctx.io, Boolean(all.json), status, () =>
            [
              `source ${source}: ${status.migrated} workspaces migrated (all sources)`,
              `sweep job: ${status.job ? `${status.job.id} ${status.job.state}` : 'none'}   lease: ${status.lease ? `held (${status.lease.ttlMs} ms left)` : 'free'}`,
              `in progress: ${state.stats ? `${state.stats.position}/${state.stats.total} (cursor ${state.cursor}), ${state.stats.migrated} migrated, ${state.stats.failed} failed` : 'none'}`,
              `last completed: ${state.last ? `${new Date(state.last.updatedAt).toISOString()}: ${state.last.total} workspaces, ${state.last.migrated} migrated, ${state.last.failed} failed` : 'never'}`,
            ].join('\n'),
          );
          return 0;
        });
      }),
    );
}
