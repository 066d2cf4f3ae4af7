/**
 * `fleet queues pause|resume|drain|retry-failed|clean <queue> [--host h] [--state s] [--grace ms]`:
 * operator actions on one fleet queue. `<queue>` is a base name (host-bound ones take `--host`,
 * default FLEET_HOST_ID) or a full BullMQ name such as `persist@host-a`.
 */
import { Queue } from 'bullmq';
import type { Command } from 'commander';
import { QUEUE_ACTIONS, RETRY_STATES, cleanJobs, drainQueue, retryJobs, setPaused, type QueueAction, type RetryState } from '../../admin/queue-admin.js';
import { UsageError } from '../../errors/usage-error.js';
import { QUEUES, QUEUE_NAMES, parseQueueName as splitBullName, queueNameFor } from '../../queues/index.js';
import { closeRedis, createRedis } from '../../redis.js';
import { fleetKeys } from '../../keys.js';
import type { CliContext } from '../context.js';
import { printResult } from '../output.js';
import { parseMs } from '../parse.js';
import { progressBar } from '../progress-bar.js';

const HOST_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The BullMQ queue name an operator means by `<queue>` and `--host`. */
export function resolveQueueTarget(raw: string, host: string | undefined, defaultHost: string): string {
  const parsed = splitBullName(raw);
  if (parsed && parsed.hostId !== null) {
    if (host !== undefined && host !== parsed.hostId) throw new UsageError(`--host ${host} contradicts queue ${raw}`);
    return raw;
  }
  if (!parsed && !(QUEUE_NAMES as readonly string[]).includes(raw.split('@')[0]!)) {
    throw new UsageError(`<queue>: unknown queue ${JSON.stringify(raw)} (expected ${QUEUE_NAMES.join(', ')}, or <queue>@<host> for host-bound ones)`);
  }
  const base = raw.split('@')[0] as (typeof QUEUE_NAMES)[number];
  if (!QUEUES[base].hostBound) {
    if (host !== undefined || raw.includes('@')) throw new UsageError(`queue ${base} is not host-bound: drop --host`);
    return base;
  }
  const hostId = host ?? defaultHost;
  if (!HOST_ID.test(hostId)) throw new UsageError(`--host: expected a host id of 1-64 letters, digits, _ or -, got ${JSON.stringify(hostId)}`);
  return queueNameFor(base, hostId);
}

// A value of a fixed set, or a usage error naming the flag.
function oneOf<T extends string>(flag: string, values: readonly T[], raw: string): T {
  if (!(values as readonly string[]).includes(raw)) throw new UsageError(`${flag}: expected one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

export function registerQueues(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('queues')
    .description('pause, resume, drain, retry or clean one fleet queue')
    .argument('<action>', QUEUE_ACTIONS.join(' | '))
    .argument('<queue>', `${QUEUE_NAMES.join(' | ')} (or <queue>@<host>)`)
    .option('--host <host>', 'host of a host-bound queue (persist, checkpoint); default FLEET_HOST_ID')
    .option('--state <state>', 'retry-failed / clean: failed or completed', undefined)
    .option('--grace <ms>', 'clean: only jobs finished more than this long ago', '0')
    .option('--delayed', 'drain: remove delayed jobs too')
    .option('--json', 'print { queue, action, jobs, paused } as JSON')
    .action((actionArg: string, queueArg: string, opts: { host?: string; state?: string; grace: string; delayed?: boolean; json?: boolean }) =>
      run(async () => {
        const action = oneOf<QueueAction>('<action>', QUEUE_ACTIONS, actionArg);
        const config = ctx.config();
        const target = resolveQueueTarget(queueArg, opts.host, config.hostId);
        const state = oneOf<RetryState>('--state', RETRY_STATES, opts.state ?? (action === 'clean' ? 'completed' : 'failed'));
        const graceMs = opts.grace === '0' ? 0 : parseMs('--grace', opts.grace, 0);
        const connected = await ctx.connectedConfig();
        const redis = createRedis({ target: connected.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-queues' });
        const queue = new Queue(target, { connection: redis, prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix(target) });
        queue.on('error', () => undefined);
        const bar = opts.json ? null : progressBar(ctx.io, `${action} ${target}`);
        const onProgress = (done: number, total: number) => bar?.update(done, total);
        try {
          const result =
            action === 'pause' ? await setPaused(queue, true)
            : action === 'resume' ? await setPaused(queue, false)
            : action === 'drain' ? await drainQueue(queue, Boolean(opts.delayed))
            : action === 'retry-failed' ? await retryJobs(queue, state, onProgress)
            : await cleanJobs(queue, state, graceMs, onProgress);
          if (action === 'retry-failed' || action === 'clean') bar?.done(`${result.jobs} job(s)`);
          printResult(ctx.io, Boolean(opts.json), result, () => {
            switch (action) {
              case 'pause':
              case 'resume':
                return `${target}: ${result.paused ? 'paused' : 'running'}`;
              case 'drain':
                return `${target}: drained ${result.jobs} waiting job(s)${opts.delayed ? ' (delayed included)' : ''}`;
              case 'retry-failed':
                return `${target}: ${result.jobs} ${state} job(s) moved back to waiting`;
              case 'clean':
                return `${target}: removed ${result.jobs} ${state} job(s) older than ${graceMs} ms`;
            }
          });
          return 0;
        } finally {
          await queue.close().catch(() => undefined);
          await closeRedis(redis);
        }
      }),
    );
}
