/** `fleet bake <manifest.json> [--activate] [--wait]` with a progress bar. */
import type { Command } from 'commander';
import { readManifestFile } from '../../bake/read-manifest-file.js';
import type { BakeResult } from '../../bake/bake-base.js';
import { createFleetClient } from '../../producers/fleet-client.js';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { progressBar } from '../progress-bar.js';

export function registerBake(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('bake')
    .description('bake a base snapshot from a manifest (reuses a ready snapshot of the same manifest hash)')
    .argument('<manifest>', 'manifest JSON file (see examples/base-manifest.json)')
    .option('--activate', 'make it the active base of its lane once ready')
    .option('--provider <name>', 'local or vercel (default FLEET_PROVIDER)')
    .option('--wait', 'wait for the snapshot (with a progress bar)')
    .option('--timeout <ms>', 'cap of --wait', '1800000')
    .option('--json', 'print the result as JSON')
    .action((file: string, opts: { activate?: boolean; provider?: string; wait?: boolean; timeout: string; json?: boolean }) =>
      run(async () => {
        const manifest = await readManifestFile(file);
        const timeoutMs = parseMs('--timeout', opts.timeout, 1_800_000);
        const config = await ctx.connectedConfig();
        const client = createFleetClient({ config });
        try {
          const bar = opts.wait && !opts.json ? progressBar(ctx.io, `bake ${manifest.name}`) : null;
          if (bar) {
            const events = await client.pool.events('bake');
            events.on('progress', ({ data }) => {
              const p = data as { step?: string; percent?: number } | number;
              if (typeof p === 'object' && p) bar.update(p.percent ?? 0, 100, p.step);
            });
          }
          const enqueued = await client.bake({ manifest, activate: Boolean(opts.activate), ...(opts.provider ? { provider: opts.provider as 'local' } : {}) }, { wait: Boolean(opts.wait), timeoutMs });
          bar?.done();
          const result = enqueued.result as BakeResult | undefined;
          printResult(ctx.io, Boolean(opts.json), result ?? enqueued, () =>
            result
              ? `${result.version}: ${result.reused ? 'reused' : 'baked'} snapshot ${result.snapshotId} (${result.provider}, lane ${result.lane}${result.activated ? ', active' : ''})`
              : `bake of ${manifest.name} enqueued (job ${enqueued.jobId}, manifest ${enqueued.manifestHash.slice(0, 12)})`,
          );
          return 0;
        } finally {
          await client.close();
        }
      }),
    );
}
