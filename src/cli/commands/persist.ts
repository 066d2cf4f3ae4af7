/** `fleet persist <ws> [--delete] [--reason R] [--wait]`: enqueue a persist of the live incarnation. */
import type { Command } from 'commander';
import { WorkspaceNotFoundError } from '../../errors/workspace-not-found-error.js';
import { PERSIST_REASONS, WorkspaceId, parsePayload, type PersistReason } from '../../queues/index.js';
import { UsageError } from '../../errors/usage-error.js';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { withServices } from '../../app/with-services.js';
import { progressBar } from '../progress-bar.js';
import { showJobProgress } from '../follow-job.js';

export function registerPersist(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('persist')
    .description('persist a workspace into a new archive revision (upload-only unless --delete)')
    .argument('<workspace>', 'workspace id')
    .option('--delete', 'reconcile: mirror deletions too')
    .option('--force', 'bypass the shrink guard')
    .option('--reason <reason>', `one of ${PERSIST_REASONS.join(', ')}`, 'manual')
    .option('--turn <id>', 'turn id recorded with the revision')
    .option('--wait', 'wait for the revision')
    .option('--timeout <ms>', 'cap of --wait', '300000')
    .option('--json', 'print the result as JSON')
    .action((workspace: string, opts: { delete?: boolean; force?: boolean; reason: string; turn?: string; wait?: boolean; timeout: string; json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        if (!(PERSIST_REASONS as readonly string[]).includes(opts.reason)) throw new UsageError(`--reason: expected one of ${PERSIST_REASONS.join(', ')}, got ${JSON.stringify(opts.reason)}`);
        const timeoutMs = parseMs('--timeout', opts.timeout, 300_000);
        return withServices(ctx, ['addresses', 'client'], async (services) => {
          const address = await services.addresses.get(workspaceId);
          if (!address) throw new WorkspaceNotFoundError(workspaceId);
          const bar = opts.wait && !opts.json ? progressBar(ctx.io, `persist ${workspaceId}`) : null;
          const enqueued = await services.client.persist(
            { workspaceId, generation: address.generation, delete: Boolean(opts.delete), force: Boolean(opts.force), reason: opts.reason as PersistReason, ...(opts.turn ? { turnId: opts.turn } : {}) },
            { wait: Boolean(opts.wait), timeoutMs, ...(bar ? { onProgress: (p: unknown) => showJobProgress(bar, p) } : {}) },
          );
          bar?.done();
          printResult(ctx.io, Boolean(opts.json), enqueued, () => {
            const r = enqueued.result;
            if (!r) return `persist of ${workspaceId} enqueued (job ${enqueued.jobId}, request ${enqueued.seq})`;
            return r.unchanged
              ? `${workspaceId}: no changes since ${r.revision ?? 'nothing'} (${r.files} files)`
              : `${workspaceId}: revision ${r.revision} (${r.files} files, ${r.bytes} bytes, ${r.changedFiles} changed, ${r.deletedFiles} deleted, ${r.durationMs} ms)`;
          });
          return 0;
        });
      }),
    );
}
