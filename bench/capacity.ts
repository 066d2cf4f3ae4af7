/**
 * `capacity` (issue 17, item 5): what each fleet operation costs Redis and the host, and whether
 * those costs predict a mixed load.
 *
 * One host runs the Procfile's provision, persist and checkpoint processes on a private Redis.
 * Calibration measures, one kind at a time on an otherwise idle fleet, the Redis commands (`INFO
 * commandstats`, the probe's own INFO excluded), Redis network bytes in and out (`INFO stats`),
 * Redis CPU and the worker processes' CPU (theirs and their rsync children's, /proc) of: the idle
 * fleet per second, a new provision, a warm reuse, a turn (one file written, a turn-end persist
 * acknowledged), a checkpoint tick that finds nothing and one that takes a change (ticks counted
 * from the fleet's own `fleet_jobs_total`, changed ones from `fleet_revisions_committed_total`).
 * The model predicts a load from its operation rates (turns, ticks, changed ticks per second: what
 * the fleet's metrics show an operator) as idle + Σ rate × cost. The load runs (W workspaces, a
 * turn every T s each, checkpoints every C s) and the measured Redis commands/s and host CPU are
 * set beside the prediction at the rates it drove (target: within 25 %). The figures feed
 * docs/capacity.md.
 */
import { readFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { ManagedProcess } from '../chaos/fleet-processes.js';
import { createFleetClient, type FleetClient } from '../src/producers/fleet-client.js';
import { LocalProvider } from '../src/providers/local/local-provider.js';
import type { ProvisionResult } from '../src/queues/provision.js';
import { parseField } from '../src/metrics/metric-fields.js';
import { fleetKeys } from '../src/keys.js';
import { withBenchEnv, type BenchEnv } from './lib/bench-env.js';
import { target, type Benchmark } from './lib/report.js';
import { scale } from './lib/scale.js';
import { summarize } from './lib/stats.js';

const HOST = 'cap-host';
const CLOCK_TICKS_PER_S = 100; // getconf CLK_TCK on Linux

/** One reading of every counter the model is made of. */
interface Reading {
  readonly at: number;
  readonly commands: number;
  readonly netIn: number;
  readonly netOut: number;
  readonly redisCpuMs: number;
  readonly hostCpuMs: number;
  /** Completed checkpoint jobs so far (the fleet's own counter). */
  readonly ticks: number;
  /** Checkpoint revisions committed so far: the ticks that took a change. */
  readonly changedTicks: number;
}

/** Costs of one operation (or of one second, for the idle fleet). */
interface Cost {
  readonly commands: number;
  readonly netIn: number;
  readonly netOut: number;
  readonly redisCpuMs: number;
  readonly hostCpuMs: number;
}

const FIELDS = ['commands', 'netIn', 'netOut', 'redisCpuMs', 'hostCpuMs'] as const;
const combine = (parts: readonly [Cost, number][]): Cost =>
  Object.fromEntries(FIELDS.map((f) => [f, parts.reduce((sum, [cost, times]) => sum + cost[f] * times, 0)])) as unknown as Cost;
const round = (cost: Cost): Cost => Object.fromEntries(FIELDS.map((f) => [f, Math.round(cost[f] * 100) / 100])) as unknown as Cost;

// CPU (user + sys, own and waited-for children) of a process, in ms.
async function processCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command: state is field 3, utime 14, stime 15, cutime 16, cstime 17 (1-based in proc(5)).
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}

function infoNumber(info: string, name: string): number {
  return Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
}

// Calls of every command but the probe's own INFO.
function commandCalls(info: string): number {
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (match[1] !== 'info') total += Number(match[2]);
  return total;
}

async function read(admin: Redis, env: BenchEnv, processes: readonly ManagedProcess[], metricsKey: string): Promise<Reading> {
  const [commandstats, stats, redisCpuMs, metrics] = await Promise.all([admin.info('commandstats'), admin.info('stats'), env.redisCpuMs(), admin.hgetall(metricsKey)]);
  let ticks = 0;
  let changedTicks = 0;
  for (const [field, value] of Object.entries(metrics)) {
    const parsed = parseField(field);
    if (parsed?.kind === 'c' && parsed.name === 'fleet_jobs_total' && parsed.labels.outcome === 'completed' && parsed.labels.queue?.startsWith('checkpoint')) ticks += Number(value);
    if (parsed?.kind === 'c' && parsed.name === 'fleet_revisions_committed_total' && parsed.labels.reason === 'checkpoint') changedTicks += Number(value);
  }
  const cpu = await Promise.all(processes.map((p) => (p.child?.pid ? processCpuMs(p.child.pid) : 0)));
  return { at: Date.now(), commands: commandCalls(commandstats), netIn: infoNumber(stats, 'total_net_input_bytes'), netOut: infoNumber(stats, 'total_net_output_bytes'), redisCpuMs, hostCpuMs: cpu.reduce((a, b) => a + b, 0), ticks, changedTicks };
}

const delta = (a: Reading, b: Reading): Cost => Object.fromEntries(FIELDS.map((f) => [f, b[f] - a[f]])) as unknown as Cost;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const capacityBench: Benchmark = async (ctx) =>
  withBenchEnv('capacity', async (env) => {
    const s = scale();
    const workspaces = Math.max(10, Math.round(20 * s));
    const checkpointMs = 2_000;
    const turnEveryMs = 4_000;
    const loadMs = Math.max(15_000, Math.round(60_000 * s));
    const idleMs = Math.max(5_000, Math.round(15_000 * s));
    const fleetEnv = env.fleetEnv({ FLEET_HOST_ID: HOST, FLEET_CHECKPOINT_INTERVAL_MS: String(checkpointMs), FLEET_LOG_LEVEL: 'error' });
    const processes = ['provision', 'persist', 'checkpoint'].map((queues) => new ManagedProcess({ name: queues, hostId: HOST, queues, env: fleetEnv }));
    env.releasers.add('fleet processes', () => Promise.all(processes.map((p) => p.kill('SIGTERM'))).then(() => undefined));
    await Promise.all(processes.map((p) => p.start()));
    const config = env.config({ FLEET_HOST_ID: HOST, FLEET_CHECKPOINT_INTERVAL_MS: String(checkpointMs) });
    const client: FleetClient = createFleetClient({ config });
    env.releasers.add('client', () => client.close());
    const admin = new Redis(env.redisUrl, { maxRetriesPerRequest: 1, connectionName: 'capacity-probe' });
    env.releasers.add('probe connection', () => void admin.disconnect());
    const local = new LocalProvider({ hostId: HOST, liveRoot: config.paths.liveRoot, snapshotRoot: config.paths.snapshotRoot, archiveRoot: config.paths.archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 });
    const probe = () => read(admin, env, processes, fleetKeys(config.redis.prefix, config.redis.keyLayout).metrics());
    const provision = async (workspaceId: string) => (await client.provision({ workspaceId }, { wait: true, timeoutMs: 120_000 })).result as ProvisionResult;
    let turnSeq = 0;
    const turn = async (placed: ProvisionResult) => {
      await local.writeFiles(placed.handle, [{ path: `turn-${turnSeq++ % 4}.txt`, content: Buffer.from(`turn ${turnSeq} ${Date.now()}`) }]);
      await client.persist({ workspaceId: placed.workspaceId, generation: placed.generation, reason: 'turn-end' }, { wait: true, timeoutMs: 120_000 });
    };

    // Calibration, one kind at a time on an otherwise idle fleet. Every kind's window has the idle
    // rate and the checkpoint ticks that fell into it subtracted, unchanged and changed apart (a
    // changed tick commits a checkpoint revision: fleet_revisions_committed_total{reason=checkpoint}).
    ctx.log(`calibrating: idle ${idleMs} ms, then ${workspaces} workspaces`);
    await sleep(2_000);
    let r0 = await probe();
    await sleep(idleMs);
    let r1 = await probe();
    const idlePerS = combine([[delta(r0, r1), 1_000 / (r1.at - r0.at)]]);
    const background = (a: Reading, b: Reading): [Cost, number][] => [[idlePerS, -(b.at - a.at) / 1_000], [tick, -(b.ticks - a.ticks - (b.changedTicks - a.changedTicks))], [changedTick, -(b.changedTicks - a.changedTicks)]];
    const per = (a: Reading, b: Reading, n: number): Cost => combine([[delta(a, b), 1 / n], ...background(a, b).map(([cost, times]): [Cost, number] => [cost, times / n])]);
    let tick: Cost = combine([]);
    let changedTick: Cost = combine([]);

    r0 = await probe();
    const placed: ProvisionResult[] = [];
    for (let i = 0; i < workspaces; i++) placed.push(await provision(`cap-${i}`));
    r1 = await probe();
    const createWindow = { a: r0, b: r1 };

    // Unchanged ticks alone: the workspaces sit through a few intervals.
    await sleep(checkpointMs);
    r0 = await probe();
    await sleep(Math.max(3 * checkpointMs, idleMs));
    r1 = await probe();
    const unchanged = r1.ticks - r0.ticks - (r1.changedTicks - r0.changedTicks);
    if (unchanged <= 0) throw new Error('no unchanged checkpoint tick completed during the tick calibration');
    tick = combine([[delta(r0, r1), 1 / unchanged], [idlePerS, -(r1.at - r0.at) / 1_000 / unchanged]]);

    // Changed ticks: every workspace gets a file that no persist takes, then the next tick takes it.
    await sleep(checkpointMs);
    r0 = await probe();
    for (const p of placed) await local.writeFiles(p.handle, [{ path: 'unpersisted.txt', content: Buffer.from(String(Date.now())) }]);
    await sleep(2 * checkpointMs);
    r1 = await probe();
    const changed = r1.changedTicks - r0.changedTicks;
    if (changed <= 0) throw new Error('no checkpoint tick took a change during the changed-tick calibration');
    changedTick = combine([[delta(r0, r1), 1 / changed], [idlePerS, -(r1.at - r0.at) / 1_000 / changed], [tick, -(r1.ticks - r0.ticks - changed) / changed]]);
    const create = per(createWindow.a, createWindow.b, workspaces);

    r0 = await probe();
    for (const p of placed) await provision(p.workspaceId);
    for (const p of placed) await provision(p.workspaceId);
    r1 = await probe();
    const reuse = per(r0, r1, 2 * workspaces);

    r0 = await probe();
    for (const p of placed) await turn(p);
    for (const p of placed) await turn(p);
    r1 = await probe();
    const turnCost = per(r0, r1, 2 * workspaces);

    // The load: each workspace a turn (warm reuse, a file, a turn-end persist) every turnEveryMs.
    const turnsPerS = (workspaces * 1_000) / turnEveryMs;
    const ticksPerS = (workspaces * 1_000) / checkpointMs;
    ctx.log(`load: ${workspaces} workspaces, a turn (reuse + write + persist) every ${turnEveryMs} ms each, checkpoints every ${checkpointMs} ms, for ${loadMs} ms`);
    let turns = 0;
    r0 = await probe();
    const started = Date.now();
    await Promise.all(
      placed.map(async (p, i) => {
        // Spread the workspaces over the turn interval, then one turn per interval each.
        await sleep((i * turnEveryMs) / workspaces);
        for (let next = Date.now(); next < started + loadMs; next += turnEveryMs) {
          await provision(p.workspaceId);
          await turn(p);
          turns += 1;
          await sleep(Math.max(0, next + turnEveryMs - Date.now()));
        }
      }),
    );
    r1 = await probe();
    const seconds = (r1.at - r0.at) / 1_000;
    const measured = combine([[delta(r0, r1), 1 / seconds]]);
    // The model takes operation rates, the ones the fleet's own metrics give an operator: turns,
    // checkpoint ticks, and the ticks that committed a revision. It is fed those the load drove.
    const rates = { turns: turns / seconds, ticks: (r1.ticks - r0.ticks) / seconds, changedTicks: (r1.changedTicks - r0.changedTicks) / seconds };
    const predicted = combine([[idlePerS, 1], [reuse, rates.turns], [turnCost, rates.turns], [tick, rates.ticks - rates.changedTicks], [changedTick, rates.changedTicks]]);
    const ratio = (f: (typeof FIELDS)[number]) => Math.round((measured[f] / predicted[f]) * 1000) / 1000;
    const within = (f: (typeof FIELDS)[number]) => Math.round(Math.abs(measured[f] / predicted[f] - 1) * 1000) / 1000;

    return {
      params: { workspaces, checkpointMs, turnEveryMs, loadMs, idleMs, processes: processes.map((p) => p.spec.queues), host: HOST },
      metrics: {
        'measured redis commands/s': summarize([measured.commands], 'commands/s'),
        'predicted redis commands/s': summarize([predicted.commands], 'commands/s'),
        'measured host cpu ms/s': summarize([measured.hostCpuMs], 'ms/s'),
        'predicted host cpu ms/s': summarize([predicted.hostCpuMs], 'ms/s'),
        'measured redis cpu ms/s': summarize([measured.redisCpuMs], 'ms/s'),
        'predicted redis cpu ms/s': summarize([predicted.redisCpuMs], 'ms/s'),
        'turns/s (stated)': summarize([turnsPerS], '/s'),
        'turns/s (done)': summarize([rates.turns], '/s'),
        'ticks/s (stated)': summarize([ticksPerS], '/s'),
        'ticks/s (done)': summarize([rates.ticks], '/s'),
        'ticks/s that took a change': summarize([rates.changedTicks], '/s'),
      },
      costs: {
        idle_fleet_per_second: round(idlePerS),
        provision_new: round(create),
        provision_reuse: round(reuse),
        turn_write_and_persist: round(turnCost),
        checkpoint_tick_unchanged: round(tick),
        checkpoint_tick_changed: round(changedTick),
        idle_workspace_per_minute_at_default_30s: round(combine([[tick, 60_000 / 30_000]])),
      },
      prediction: { rates, predicted: round(predicted), measured: round(measured), ratio: Object.fromEntries(FIELDS.map((f) => [f, ratio(f)])) },
      targets: [target('redis commands/s: |measured / predicted − 1|', within('commands'), '<=', 0.25), target('host cpu: |measured / predicted − 1|', within('hostCpuMs'), '<=', 0.25)],
      notes: [
        'costs are per operation (commands, bytes in/out of Redis, ms of Redis CPU, ms of host CPU: the provision, persist and checkpoint processes and their rsync children); the idle fleet is per second',
        'a turn = one file written into the live tree + a turn-end persist acknowledged; in the load each turn also provisions first (a warm reuse), as an app does per request',
        'prediction = idle + turns/s x (reuse + turn) + unchanged ticks/s x tick + changed ticks/s x changed tick, at the rates the load drove',
      ],
    } as Awaited<ReturnType<Benchmark>>;
  });

export default capacityBench;
