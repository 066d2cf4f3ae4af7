/** `fleet status`: job counts per queue and live workers. */
import type { Command } from 'commander';
import { fleetKeys } from '../../keys.js';
import { closeRedis, createRedis } from '../../redis.js';
import { COUNT_STATES, readFleetStatus } from '../../status/fleet-status.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';

export function registerStatus(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('status')
    .description('show job counts per queue and live workers')
    .option('--json', 'print { queues: { <name>: { waiting, active, delayed, completed, failed } }, byQueue, workers, unservedQueues, ... }')
    .action((opts: { json?: boolean }) =>
      run(async () => {
        const config = await ctx.connectedConfig();
        const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-status' });
        try {
          const status = await readFleetStatus(redis, fleetKeys(config.redis.prefix, config.redis.keyLayout), config);
          printResult(ctx.io, Boolean(opts.json), status, () =>
            [
              table(['queue', ...COUNT_STATES], Object.entries(status.byQueue).sort(([a], [b]) => a.localeCompare(b)).map(([name, c]) => [name, ...COUNT_STATES.map((s) => c[s])])),
              '',
              `workers: ${status.workers}   hosts: ${status.hosts.join(', ')}`,
              `active workspaces: ${status.activeWorkspaces}   max persist lag: ${status.maxPersistLagMs} ms   fence rejections: ${status.fenceRejections}`,
              `isolation: ${Object.entries(status.isolation).map(([host, mode]) => `${host}=${mode}${mode === 'none' ? ' (WARNING: sandboxes are not isolated)' : ''}`).join(', ') || 'no sandbox host reported'}`,
              ...status.unservedQueues.map(
                (u) => `ALERT: queue ${u.queue} has ${u.waiting} waiting${u.delayed ? ` and ${u.delayed} delayed` : ''} job(s) and no live worker serves it (start one: fleet worker --queues ${u.queue.split('@')[0]}${u.queue.includes('@') ? ` --host ${u.queue.split('@')[1]}` : ''})`,
              ),
            ].join('\n'),
          );
          return 0;
        } finally {
          await closeRedis(redis);
        }
      }),
    );
}
