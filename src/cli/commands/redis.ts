/** `fleet redis migrate-keys --from <layout>`: moves the fleet's Redis state to the configured key layout (see key-migration/migrate-keys). */
import type { Command } from 'commander';
import { fleetKeys, type KeyLayout } from '../../keys.js';
import { migrateKeys } from '../../key-migration/migrate-keys.js';
import { closeRedis, createRedis } from '../../redis.js';
import { UsageError } from '../../errors/usage-error.js';
import type { CliContext } from '../context.js';
import { printResult } from '../output.js';
import { progressBar } from '../progress-bar.js';

const LAYOUTS: readonly KeyLayout[] = ['single-slot', 'per-queue', 'sharded'];

export function registerRedis(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const redisCommand = program.command('redis').description("manage the fleet's Redis keys");
  redisCommand
    .command('migrate-keys')
    .description('move every key from --from to the layout FLEET_REDIS_KEY_LAYOUT names (every fleet process stopped; resumable)')
    .requiredOption('--from <layout>', `the layout the keys are in now: ${LAYOUTS.join(' | ')}`)
    .option('--dry-run', 'count what would move, move nothing')
    .option('--json', 'print { from, to, dryRun, workspaces, keysMoved, indexEntriesMoved, scheduledTicksLeft, conflicts, unplaced }')
    .addHelpText('after', '\nExamples:\n  FLEET_REDIS_KEY_LAYOUT=sharded fleet redis migrate-keys --from single-slot --dry-run\n  FLEET_REDIS_KEY_LAYOUT=sharded fleet redis migrate-keys --from single-slot')
    .action((opts: { from: string; dryRun?: boolean; json?: boolean }) =>
      run(async () => {
        if (!(LAYOUTS as readonly string[]).includes(opts.from)) throw new UsageError(`--from: expected one of ${LAYOUTS.join(', ')}, got ${JSON.stringify(opts.from)}`);
        const config = await ctx.connectedConfig();
        const from = fleetKeys(config.redis.prefix, opts.from as KeyLayout);
        const to = fleetKeys(config.redis.prefix, config.redis.keyLayout);
        if (from.layout === to.layout) throw new UsageError(`--from ${opts.from}: FLEET_REDIS_KEY_LAYOUT is ${to.layout} already (set it to the layout to migrate to)`);
        const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-migrate-keys' });
        const bar = opts.json ? null : progressBar(ctx.io, `${opts.dryRun ? 'dry run ' : ''}${from.layout} → ${to.layout}`);
        try {
          const result = await migrateKeys({
            redis,
            from,
            to,
            uidRange: config.sandbox.uidRange,
            heartbeatIntervalMs: config.worker.heartbeatIntervalMs,
            dryRun: Boolean(opts.dryRun),
            onProgress: (done, total) => bar?.update(done, total),
          });
          bar?.done(`${result.workspaces} workspace(s)`);
          printResult(ctx.io, Boolean(opts.json), result, () =>
            [
              `${result.dryRun ? 'would move' : 'moved'} ${result.keysMoved} key(s) of ${result.workspaces} workspace(s) and ${result.indexEntriesMoved} index entr(ies) from ${result.from} to ${result.to}`,
              ...(result.scheduledTicksLeft > 0 ? [`${result.scheduledTicksLeft} scheduler tick(s) stay under the old queue names: the GC schedule comes back when the fleet starts; provision each active workspace once to re-create its checkpoint scheduler`] : []),
              ...result.conflicts.map((c) => `CONFLICT: ${c.from} and ${c.to} both exist with different values (neither touched)`),
              ...result.unplaced.map((u) => `left in ${u.index}: ${u.entry} (names no valid workspace)`),
            ].join('\n'),
          );
          return result.conflicts.length > 0 ? 1 : 0;
        } finally {
          await closeRedis(redis);
        }
      }),
    );
}
