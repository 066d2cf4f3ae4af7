/**
 * `fleet jobs list|show|retry`: the jobs of every fleet queue for an operator, newest first, with
 * decoded failure reasons; one job in full (data, failure, progress, its log steps); a bulk replay
 * of failed jobs inside a time window (`fleet jobs retry --state failed --since 1h`).
 */
import { Queue } from 'bullmq';
import type { Command } from 'commander';
import { LISTED_STATES, listJobs, retryFailed, type ListedState } from '../../admin/job-listing.js';
import { UsageError } from '../../errors/usage-error.js';
import { fleetKeys } from '../../keys.js';
import { QUEUES, QUEUE_NAMES, isQueueName } from '../../queues/index.js';
import { closeRedis, createRedis } from '../../redis.js';
import { fleetQueueNames } from '../../status/queue-names.js';
import { jobView } from '../../status/job-view.js';
import type { Config } from '../../config.js';
import type { CliContext } from '../context.js';
import { printResult, table } from '../output.js';
import { parseCount, parseSince } from '../parse.js';
import { resolveQueueTarget } from './queues.js';

const EXAMPLES = `
Examples:
  fleet jobs list --state failed --since 1h          failed in the last hour, every queue
  fleet jobs list --queue persist --json             persist jobs of every host, as JSON
  fleet jobs show persist@host-a 42                  one job: data, failure, progress, log steps
  fleet jobs retry --state failed --since 1h         replay what failed in the last hour
  fleet jobs retry --queue provision --dry-run       list what a retry would replay`;

// The BullMQ queues `--queue` (base or full name) and `--host` select, among the fleet's queues.
function selectQueues(all: readonly string[], queue: string | undefined, host: string | undefined, config: Config): string[] {
  if (queue === undefined) {
    if (host !== undefined) return all.filter((name) => name.endsWith(`@${host}`));
    return [...all];
  }
  if (isQueueName(queue) && QUEUES[queue].hostBound && host === undefined) return all.filter((name) => name.startsWith(`${queue}@`));
  if (queue.startsWith('hostops@') || (queue === 'hostops' && host !== undefined)) return [queue === 'hostops' ? `hostops@${host}` : queue];
  return [resolveQueueTarget(queue, host, config.hostId)];
}

function parseStates(raw: string | undefined, fallback: readonly ListedState[]): ListedState[] {
  if (raw === undefined || raw === 'all') return [...fallback];
  const states = raw.split(',').map((s) => s.trim());
  for (const state of states) {
    if (!(LISTED_STATES as readonly string[]).includes(state)) throw new UsageError(`--state: expected ${LISTED_STATES.join(', ')} or all (comma-separated), got ${JSON.stringify(state)}`);
  }
  return [...new Set(states)] as ListedState[];
}

// Opens the named queues on one client connection for the action, and closes everything after.
async function withQueues<T>(ctx: CliContext, pickNames: (all: string[], config: Config) => string[], action: (queues: Queue[]) => Promise<T>): Promise<T> {
  const config = await ctx.connectedConfig();
  const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-jobs' });
  const queues: Queue[] = [];
  try {
    const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
    const names = pickNames(await fleetQueueNames(redis, keys, config), config);
    for (const name of names) {
      const queue = new Queue(name, { connection: redis, prefix: keys.queuePrefix(name) });
      queue.on('error', () => undefined);
      queues.push(queue);
    }
    return await action(queues);
  } finally {
    for (const queue of queues) await queue.close().catch(() => undefined);
    await closeRedis(redis);
  }
}

const age = (iso: string | null, now: number): string => {
  if (!iso) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1_000));
  return s < 120 ? `${s}s ago` : s < 7_200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3_600)}h ago`;
};

export function registerJobs(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  const jobs = program.command('jobs').description('list, show and retry the jobs of the fleet queues').addHelpText('after', EXAMPLES);
  jobs
    .command('list')
    .description('jobs of every fleet queue (or --queue), newest first, with failure reasons')
    .option('--queue <queue>', `${QUEUE_NAMES.join(' | ')}, <queue>@<host> or hostops@<host> (default: all)`)
    .option('--host <host>', 'only the queues of this host')
    .option('--state <states>', `${LISTED_STATES.join(',')} or all`, 'all')
    .option('--since <when>', 'only jobs that moved since: 90s, 30m, 1h, 2d or an ISO 8601 time')
    .option('--limit <n>', 'at most this many jobs (1-1000)', '50')
    .option('--json', 'print { jobs: [{ queue, jobId, name, state, workspaceId, attemptsMade, createdAt, finishedAt, durationMs, failure }] }')
    .addHelpText('after', EXAMPLES)
    .action((opts: { queue?: string; host?: string; state?: string; since?: string; limit: string; json?: boolean }) =>
      run(async () => {
        const now = Date.now();
        const states = parseStates(opts.state, LISTED_STATES);
        const since = opts.since === undefined ? null : parseSince('--since', opts.since, now);
        const limit = parseCount('--limit', opts.limit, 1, 1_000);
        const listed = await withQueues(ctx, (all, config) => selectQueues(all, opts.queue, opts.host, config), (queues) => listJobs(queues, { states, since, limit }));
        printResult(ctx.io, Boolean(opts.json), { jobs: listed }, () =>
          listed.length === 0
            ? 'no jobs match'
            : table(
                ['queue', 'id', 'state', 'workspace', 'attempts', 'finished', 'ms', 'failure'],
                listed.map((j) => [j.queue, j.jobId, j.state, j.workspaceId, j.attemptsMade, age(j.finishedAt, now), j.durationMs, j.failure ? `${j.failure.code}: ${j.failure.message}`.slice(0, 100) : null]),
              ),
        );
        return 0;
      }),
    );
  jobs
    .command('show')
    .description('one job: state, data, progress, result or typed failure, and its log steps')
    .argument('<queue>', 'the queue as `fleet jobs list` prints it (persist@host-a, provision, …)')
    .argument('<id>', 'job id')
    .option('--host <host>', 'host of a host-bound queue given by its base name')
    .option('--json', 'print { queue, jobId, name, state, data, progress, result, failure, attemptsMade, createdAt, processedAt, finishedAt, logs }')
    .addHelpText('after', EXAMPLES)
    .action((queueArg: string, id: string, opts: { host?: string; json?: boolean }) =>
      run(async () => {
        if (!/^[A-Za-z0-9:_-]{1,200}$/.test(id)) throw new UsageError(`<id>: expected a job id, got ${JSON.stringify(id)}`);
        const view = await withQueues(ctx, (all, config) => selectQueues(all, queueArg, opts.host, config).slice(0, 1), async ([queue]) => {
          if (!queue) throw new UsageError(`<queue>: no fleet queue ${JSON.stringify(queueArg)}`);
          const base = await jobView(queue, id);
          const job = await queue.getJob(id);
          const { logs } = await queue.getJobLogs(id, 0, 199, true);
          return { ...base, data: job?.data ?? null, stacktrace: job?.stacktrace?.at(-1) ?? null, logs };
        });
        printResult(ctx.io, Boolean(opts.json), view, () =>
          [
            table(
              ['field', 'value'],
              [
                ['job', `${view.queue} ${view.jobId} (${view.name})`],
                ['state', view.state],
                ['attempts', view.attemptsMade],
                ['created', view.createdAt],
                ['processed', view.processedAt],
                ['finished', view.finishedAt],
                ['data', JSON.stringify(view.data)],
                ['progress', JSON.stringify(view.progress)],
                ['result', view.result === null ? null : JSON.stringify(view.result)],
                ['failure', view.failure ? `${view.failure.code}: ${view.failure.message}${view.failure.retryable ? ' (retryable)' : ''}` : null],
              ],
            ),
            ...(view.logs.length > 0 ? ['', 'log:', ...view.logs.map((line) => `  ${line}`)] : []),
          ].join('\n'),
        );
        return 0;
      }),
    );
  jobs
    .command('retry')
    .description('move failed jobs back to waiting (every fleet queue, or --queue), optionally only recent ones')
    .option('--state <state>', 'failed (the only state a bulk replay takes)', 'failed')
    .option('--queue <queue>', `${QUEUE_NAMES.join(' | ')}, <queue>@<host> or hostops@<host> (default: all)`)
    .option('--host <host>', 'only the queues of this host')
    .option('--since <when>', 'only jobs that failed since: 90s, 30m, 1h, 2d or an ISO 8601 time')
    .option('--dry-run', 'list what would be retried, change nothing')
    .option('--json', 'print { dryRun, retried, jobs: [{ queue, jobId, retried }] }')
    .addHelpText('after', EXAMPLES)
    .action((opts: { state: string; queue?: string; host?: string; since?: string; dryRun?: boolean; json?: boolean }) =>
      run(async () => {
        if (opts.state !== 'failed') throw new UsageError(`--state: expected failed, got ${JSON.stringify(opts.state)} (a completed job is replayed with fleet queues retry-failed <queue> --state completed)`);
        const since = opts.since === undefined ? null : parseSince('--since', opts.since, Date.now());
        const dryRun = Boolean(opts.dryRun);
        const outcomes = await withQueues(ctx, (all, config) => selectQueues(all, opts.queue, opts.host, config), async (queues) => {
          const all = [];
          for (const queue of queues) all.push(...(await retryFailed(queue, since, dryRun)));
          return all;
        });
        const retried = outcomes.filter((o) => o.retried).length;
        printResult(ctx.io, Boolean(opts.json), { dryRun, retried, jobs: outcomes }, () =>
          dryRun
            ? [`${outcomes.length} failed job(s) would be retried`, ...outcomes.map((o) => `  ${o.queue} ${o.jobId}`)].join('\n')
            : `${retried} failed job(s) moved back to waiting${outcomes.length > retried ? ` (${outcomes.length - retried} changed meanwhile)` : ''}`,
        );
        return 0;
      }),
    );
}
