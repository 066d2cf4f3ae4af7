/**
 * `npm run chaos -- [--profile short|long] [--duration S] [--seed N] [--workspaces W] [--vercel V]`
 *
 * Starts the Procfile's processes as real separate processes for two hosts on this machine
 * (several workers per queue) plus the workers of the Vercel queues (`--host vercel`), drives a
 * workload of workspaces doing turns (V of them on Vercel: the real SDK against the loopback
 * stand-in), injects faults at random, then stops the faults, lets the fleet settle and checks
 * the invariants from outside. Prints one JSON summary and exits non-zero on any violation.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/lib/free-port.js';
import { Queue } from 'bullmq';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createFleetClient } from '../src/producers/fleet-client.js';
import { LocalProvider } from '../src/providers/local/local-provider.js';
import { createRedis } from '../src/redis.js';
import { createServices } from '../src/app/services.js';
import { runGc } from '../src/gc/run-gc.js';
import { ManagedProcess } from './fleet-processes.js';
import { injectFault, type FaultName } from './faults.js';
import { checkInvariants } from './invariants.js';
import { RedisProcess } from './redis-process.js';
import { newModel, runTurn, type WorkloadContext } from './workload.js';
import { rng as createRng } from '../test/helpers/rng.js';
import { VercelStandin } from '../test/helpers/vercel-standin/vercel-standin.js';
import { createVercelProvider } from '../src/providers/vercel/vercel-provider.js';
import { VERCEL_HOST_ID } from '../src/providers/vercel/sandbox-info.js';
import type { SandboxProvider } from '../src/providers/sandbox-provider.js';
import { fleetKeys } from '../src/keys.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const profile = option('profile') ?? 'short';
if (!['short', 'long'].includes(profile)) throw new Error(`--profile: expected short or long, got ${profile}`);
const durationS = Number(option('duration') ?? (profile === 'long' ? 1_800 : 120));
const seed = Number(option('seed') ?? Date.now() % 1_000_000);
const workspaceCount = Number(option('workspaces') ?? (profile === 'long' ? 12 : 8));
const vercelCount = Number(option('vercel') ?? (profile === 'long' ? 4 : 3));
for (const [flag, value] of [['duration', durationS], ['seed', seed], ['workspaces', workspaceCount]] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${flag}: expected a positive whole number, got ${value}`);
}
if (!Number.isInteger(vercelCount) || vercelCount < 0 || vercelCount > workspaceCount) throw new Error(`--vercel: expected a whole number from 0 to ${workspaceCount}, got ${vercelCount}`);
const log = (line: string) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


// A harness bug must fail the run loudly, not silently pass: count unhandled rejections as violations.
let unhandled = 0;
/** How long cleanup may take after the summary before the process exits with its verdict. */
const CLEANUP_DEADLINE_MS = 60_000;
process.on('unhandledRejection', (error) => {
  unhandled += 1;
  log(`unhandled rejection in the chaos driver: ${(error as Error)?.stack ?? String(error)}`);
});

async function main(): Promise<number> {
  const rng = createRng(seed);
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-chaos-'));
  const archiveRoot = path.join(dir, 'archive');
  await mkdir(archiveRoot, { recursive: true });
  const redis = new RedisProcess(await freePort(), path.join(dir, 'redis'));
  await mkdir(redis.dir, { recursive: true });
  await redis.start();
  const vercel = await VercelStandin.start();
  const hosts = ['host-a', 'host-b'];
  const common = {
    REDIS_URL: redis.url,
    FLEET_PREFIX: '{chaos}',
    FLEET_ARCHIVE_ROOT: archiveRoot,
    FLEET_SNAPSHOT_ROOT: path.join(dir, 'snapshots'),
    FLEET_LOG_LEVEL: 'warn',
    FLEET_LOCK_DURATION_MS: '3000',
    FLEET_STALLED_INTERVAL_MS: '1500',
    FLEET_MAX_STALLED_COUNT: '20',
    FLEET_HEARTBEAT_INTERVAL_MS: '500',
    FLEET_LOCK_TTL_MS: '3000',
    FLEET_CHECKPOINT_INTERVAL_MS: '2000',
    FLEET_SHUTDOWN_FLUSH_MS: '0',
    FLEET_SHUTDOWN_GRACE_MS: '5000',
    FLEET_PERSIST_DEADLINE_MS: '30000',
    FLEET_PROVISION_DEADLINE_MS: '30000',
    FLEET_REDIS_COMMAND_TIMEOUT_MS: '2000',
    FLEET_GC_SCHEDULE: 'unattached=off,retention=off,litter=off,bases=off,orphans=5000,idle=off',
    // Every process can reach Vercel (the stand-in); new workspaces default to local.
    FLEET_VERCEL_TOKEN: vercel.credentials.token,
    FLEET_VERCEL_TEAM_ID: vercel.credentials.teamId,
    FLEET_VERCEL_PROJECT_ID: vercel.credentials.projectId,
    FLEET_VERCEL_API_URL: vercel.url,
  };
  const hostEnv = (hostId: string) => ({ ...common, FLEET_HOST_ID: hostId, FLEET_HOME: path.join(dir, hostId), FLEET_LIVE_ROOT: path.join(dir, hostId, 'live') });
  const processes: ManagedProcess[] = [];
  for (const hostId of hosts) {
    for (const [queues, count] of [['provision', 2], ['persist', 2], ['checkpoint', 1]] as const) {
      for (let i = 0; i < count; i++) processes.push(new ManagedProcess({ name: `${hostId}/${queues}#${i}`, hostId, queues, env: hostEnv(hostId) }));
    }
  }
  processes.push(new ManagedProcess({ name: 'host-a/gc#0', hostId: 'host-a', queues: 'gc', env: hostEnv('host-a') }));
  // The Vercel queues (persist@vercel, checkpoint@vercel), as the Procfile's persist-vercel and checkpoint-vercel.
  for (const [queues, count] of [['persist', 2], ['checkpoint', 1]] as const) {
    for (let i = 0; i < count; i++) processes.push(new ManagedProcess({ name: `vercel/${queues}#${i}`, hostId: 'host-a', queues, args: ['--host', 'vercel'], env: hostEnv('host-a') }));
  }
  await Promise.all(processes.map((p) => p.start()));
  log(`seed ${seed}, ${durationS} s, ${workspaceCount} workspaces, ${processes.length} worker processes on ${hosts.length} hosts`);

  const clientConfig = loadConfig(hostEnv('host-a'));
  const client = createFleetClient({ config: clientConfig });
  const providers = new Map<string, SandboxProvider>(
    hosts.map((h) => [h, new LocalProvider({ hostId: h, liveRoot: hostEnv(h).FLEET_LIVE_ROOT, snapshotRoot: common.FLEET_SNAPSHOT_ROOT, archiveRoot: common.FLEET_ARCHIVE_ROOT, systemPath: clientConfig.systemPath, copyTimeoutMs: 60_000 })]),
  );
  providers.set(VERCEL_HOST_ID, createVercelProvider(clientConfig, { pollIntervalMs: 50 }));
  const counters = { turns: 0, acked: 0, failedTurns: 0, failures: {} as Record<string, number>, failureSamples: {} as Record<string, string[]>, ackedByProvider: {} as Record<string, number> };
  const ctx: WorkloadContext = { client, providers, rng, counters };
  // The last `vercelCount` workspaces live on Vercel.
  const models = Array.from({ length: workspaceCount }, (_, i) => newModel(`chaos-${i}`, i >= workspaceCount - vercelCount ? 'vercel' : 'local'));
  const faults: Record<FaultName, number> = { killWorker: 0, pauseWorker: 0, killChild: 0, restartRedis: 0, archiveReadOnly: 0, hostStop: 0, vercelOutage: 0 };

  const endAt = Date.now() + durationS * 1_000;
  const agents = models.map(async (model) => {
    while (Date.now() < endAt) await runTurn(ctx, model);
  });
  // Every fault kind in each round (shuffled), the frequent ones twice, so a short run sees them all.
  const round: FaultName[] = ['killWorker', 'killWorker', 'pauseWorker', 'pauseWorker', 'killChild', 'killChild', 'restartRedis', 'archiveReadOnly', 'hostStop', ...(vercelCount > 0 ? (['vercelOutage'] as const) : [])];
  const injector = (async () => {
    await pause(3_000);
    while (Date.now() < endAt - 5_000) {
      const order = [...round].sort(() => rng() - 0.5);
      for (const name of order) {
        if (Date.now() >= endAt - 5_000) break;
        try {
          await injectFault(name, { rng, processes, redis, archiveRoot, hostToStop: 'host-b', vercel, log });
          faults[name] += 1;
        } catch (error) {
          log(`fault ${name} failed to inject: ${(error as Error).message}`);
        }
        await pause(rng.int(300, 2_000));
      }
    }
  })();
  await Promise.all([injector, ...agents]);

  log('faults stopped; settling');
  for (const p of processes) {
    if (p.stopped) p.signal('SIGCONT');
    if (!p.alive) await p.start();
  }
  for (const model of models) await client.stopCheckpoints(model.workspaceId).catch(() => undefined);
  const checkerConfig = loadConfig({ ...hostEnv('host-a'), FLEET_PROVISION_DEADLINE_MS: '1000' });
  const checkRedis = createRedis({ url: redis.url, role: 'client', commandTimeoutMs: 5_000, name: 'chaos-check' });
  const queueNames = ['provision', 'gc', ...[...hosts, VERCEL_HOST_ID].flatMap((h) => [`persist@${h}`, `checkpoint@${h}`])];
  const queues = queueNames.map((name) => new Queue(name, { connection: checkRedis, prefix: common.FLEET_PREFIX }));
  const settleDeadline = Date.now() + 180_000;
  for (;;) {
    const counts = await Promise.all(queues.map((q) => q.getJobCounts('active', 'waiting', 'prioritized')));
    const busy = counts.reduce((s, c) => s + (c.active ?? 0) + (c.waiting ?? 0) + (c.prioritized ?? 0), 0);
    if (busy === 0 || Date.now() > settleDeadline) break;
    await pause(500);
  }
  // A creator killed by a fault leaves its pending-create lease until it expires: wait for that.
  const checkKeys = fleetKeys(common.FLEET_PREFIX);
  const leaseDeadline = Date.now() + 60_000;
  while ((await checkRedis.zcount(checkKeys.pendingCreates(0), `(${Date.now()}`, '+inf')) > 0 && Date.now() < leaseDeadline) await pause(500);
  // Each host's GC collects its own orphans (as its host janitor does); host-a's also Vercel's.
  const servicesByHost = hosts.map((h) =>
    createServices({ config: loadConfig({ ...hostEnv(h), FLEET_PROVISION_DEADLINE_MS: '1000' }), redis: checkRedis, logger: createLogger({ level: 'silent' }) }),
  );
  for (const services of servicesByHost) await runGc(services, { kind: 'orphans', dryRun: false, limit: 1_000 }, AbortSignal.timeout(60_000)).catch((e: Error) => log(`gc orphans: ${e.message}`));
  const checker = createServices({ config: checkerConfig, redis: checkRedis, logger: createLogger({ level: 'silent' }) });
  const report = await checkInvariants(checker, models, providers, queues);

  const summary = {
    seed,
    profile,
    durationS,
    workspaces: workspaceCount,
    vercelWorkspaces: vercelCount,
    workerProcesses: processes.length,
    hosts: hosts.length,
    machine: { cpus: cpus().length, node: process.version },
    faults,
    workerRestarts: processes.reduce((s, p) => s + p.restarts, 0),
    turns: counters.turns,
    acked: counters.acked,
    ackedByProvider: counters.ackedByProvider,
    failedTurns: counters.failedTurns,
    turnFailures: counters.failures,
    turnFailureSamples: counters.failureSamples,
    lost: report.lost,
    torn: report.torn,
    fenceViolations: report.fenceViolations,
    duplicateSandboxes: report.duplicateSandboxes,
    orphans: report.orphans,
    stuckJobs: report.stuckJobs,
    untypedFailures: report.untypedFailures,
    unhandledRejections: unhandled,
    details: report.details,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  const violations = report.lost + report.torn + report.fenceViolations + report.duplicateSandboxes + report.orphans + report.stuckJobs + report.untypedFailures + unhandled;
  if (counters.acked === 0) log('no turn was acknowledged: the workload did not run');
  const verdict = counters.acked === 0 || violations > 0 ? 1 : 0;
  // The verdict is final once the summary is out: a cleanup step that hangs (a connection that
  // keeps reconnecting, a slow delete) must not turn it into a timeout or a silent exit 0.
  process.exitCode = verdict;
  setTimeout(() => {
    log(`cleanup still running after ${CLEANUP_DEADLINE_MS / 1000} s: exiting with the verdict`);
    process.exit(verdict);
  }, CLEANUP_DEADLINE_MS).unref();

  for (const q of queues) await q.close();
  for (const s of [...servicesByHost, checker]) await s.close();
  await client.close();
  checkRedis.disconnect();
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await redis.stop('SIGKILL');
  await vercel.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  return verdict;
}

process.exitCode = await main();
