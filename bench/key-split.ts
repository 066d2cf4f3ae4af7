/**
 * `key-split` (issue 17): how the fleet's Redis commands divide over a cluster's slots, under
 * `FLEET_REDIS_KEY_LAYOUT=per-queue` and `sharded`, side by side in one run: BullMQ's queue keys
 * (a tag per queue), the workspaces' bucket keys (`sharded`: a tag per bucket of workspaces) and
 * the fleet's own keys left in the prefix's one slot. Each key's slot (CRC16, as Redis computes
 * it) is counted too: one slot lives on one master, so the busiest slot's share is what no
 * number of masters can spread.
 *
 * For each layout one host runs the Procfile's provision, persist and checkpoint processes; W
 * workspaces do turns (a warm reuse, a file, a turn-end persist acknowledged) with checkpoints
 * every 2 s. Every command Redis receives meanwhile is read with MONITOR and counted by its first
 * key.
 */
import { spawn } from 'node:child_process';
import keySlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { scanKeys } from '../src/state/scan-keys.js';
import { createInterface } from 'node:readline';
import { ManagedProcess } from '../chaos/fleet-processes.js';
import { createFleetClient } from '../src/producers/fleet-client.js';
import { LocalProvider } from '../src/providers/local/local-provider.js';
import type { ProvisionResult } from '../src/queues/provision.js';
import { withBenchEnv, type BenchEnv } from './lib/bench-env.js';
import type { KeyLayout } from '../src/keys.js';
import { target, type Benchmark } from './lib/report.js';
import { scale } from './lib/scale.js';
import { summarize } from './lib/stats.js';

// Commands that name no key (connection set-up, transactions, server calls).
const KEYLESS = new Set(['select', 'hello', 'client', 'info', 'ping', 'time', 'multi', 'exec', 'script', 'monitor', 'config']);

/** The first key a command names, or undefined. */
export function firstKey(args: readonly string[]): string | undefined {
  const command = args[0]?.toLowerCase() ?? '';
  if (KEYLESS.has(command)) return undefined;
  if (command === 'evalsha' || command === 'eval') return Number(args[2]) > 0 ? args[3] : undefined;
  if (command === 'xread' || command === 'xreadgroup') {
    const streams = args.findIndex((arg) => arg.toUpperCase() === 'STREAMS');
    return streams >= 0 ? args[streams + 1] : undefined;
  }
  return args[1];
}

interface Split {
  readonly queue: number;
  readonly bucket: number;
  readonly fleet: number;
  readonly keyless: number;
  /** Keyed commands per cluster slot. */
  readonly slots: ReadonlyMap<number, number>;
}

// One layout's run: W workspaces x R turns under MONITOR, every command counted by its first key.
async function measure(env: BenchEnv, layout: KeyLayout, workspaces: number, rounds: number, log: (line: string) => void): Promise<Split> {
  // The same host and prefix for every layout, so the queues hash to the same slots in each run (their keys are removed between runs).
  const hostId = 'split';
  const prefix = '{ksplit}';
  const settings = { FLEET_HOST_ID: hostId, FLEET_PREFIX: prefix, FLEET_CHECKPOINT_INTERVAL_MS: '2000', FLEET_LOG_LEVEL: 'error', FLEET_REDIS_KEY_LAYOUT: layout };
  const processes = ['provision', 'persist', 'checkpoint'].map((queues) => new ManagedProcess({ name: `${queues}-${layout}`, hostId, queues, env: env.fleetEnv(settings) }));
  const stop = () => Promise.all(processes.map((p) => p.kill('SIGTERM'))).then(() => undefined);
  env.releasers.add(`fleet processes (${layout})`, stop);
  await Promise.all(processes.map((p) => p.start()));
  const config = env.config(settings);
  const client = createFleetClient({ config });
  env.releasers.add(`client (${layout})`, () => client.close());
  const local = new LocalProvider({ hostId, liveRoot: config.paths.liveRoot, snapshotRoot: config.paths.snapshotRoot, archiveRoot: config.paths.archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 });
  const placed: ProvisionResult[] = [];
  for (let i = 0; i < workspaces; i++) placed.push((await client.provision({ workspaceId: `split-${layout}-${i}` }, { wait: true })).result as ProvisionResult);

  const [before, after] = prefix.split(/\{[^}]*\}/) as [string, string];
  const tag = /\{([^}]*)\}/.exec(prefix)![1]!;
  const fleetTag = `${before}{${tag}}${after}`;
  const queueTag = `${before}{${tag}:`;
  const bucketTag = `${before}{${tag}/ws`;
  const counts = { queue: 0, bucket: 0, fleet: 0, keyless: 0, slots: new Map<number, number>() };
  // MONITOR through redis-cli, line-buffered, one line per command (ioredis' monitor mode throws from its
  // socket handler when a line arrives as it closes, which would crash the run).
  // (redis-cli 7.0 fails AUTH for `-u redis://:password@…`, an empty user name: the parts are passed.)
  const redisAt = new URL(env.redisUrl);
  const monitor = spawn('stdbuf', ['-oL', 'redis-cli', '--no-auth-warning', '-h', redisAt.hostname, '-p', redisAt.port, ...(redisAt.password ? ['-a', decodeURIComponent(redisAt.password)] : []), 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] });
  env.releasers.add(`monitor (${layout})`, () => void monitor.kill('SIGKILL'));
  let counting = true;
  createInterface({ input: monitor.stdout! }).on('line', (line) => {
    if (!counting || !line.includes('] "')) return;
    const args = [...line.slice(line.indexOf(']') + 1).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
    const key = firstKey(args);
    // Only this layout's keys (the other run's processes are gone, but be exact).
    if (key === undefined || !key.startsWith(`${before}{${tag}`)) {
      counts.keyless += 1;
      return;
    }
    if (key.startsWith(queueTag)) counts.queue += 1;
    else if (key.startsWith(bucketTag)) counts.bucket += 1;
    else if (key.startsWith(fleetTag)) counts.fleet += 1;
    const slot = keySlot(key);
    counts.slots.set(slot, (counts.slots.get(slot) ?? 0) + 1);
  });
  // Counting starts once redis-cli is in monitor mode (it prints OK first).
  await new Promise<void>((resolve, reject) => {
    monitor.once('error', reject);
    monitor.stdout!.once('data', () => resolve());
  });
  log(`${layout}: ${workspaces} workspaces x ${rounds} turns, checkpoints every 2 s, under MONITOR`);
  for (let round = 0; round < rounds; round++) {
    for (const p of placed) {
      await client.provision({ workspaceId: p.workspaceId }, { wait: true });
      await local.writeFiles(p.handle, [{ path: 'turn.txt', content: Buffer.from(`round ${round}`) }]);
      await client.persist({ workspaceId: p.workspaceId, generation: p.generation, reason: 'turn-end' }, { wait: true });
    }
  }
  // Two intervals more, so the last turns' ticks are counted too.
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  counting = false;
  monitor.kill('SIGKILL');
  await stop();
  await client.close();
  // Remove every key of the run (queues, schedulers, workspace state), so the next layout starts clean.
  const redis = new Redis(env.redisUrl);
  try {
    const keys: string[] = [];
    await scanKeys(redis, `${before}{${tag}*`, (key) => keys.push(key));
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
  return counts;
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 1000);

const keySplit: Benchmark = async (ctx) =>
  withBenchEnv('key-split', async (env) => {
    const workspaces = Math.max(5, Math.round(10 * scale()));
    const rounds = 4;
    const perQueue = await measure(env, 'per-queue', workspaces, rounds, ctx.log);
    const sharded = await measure(env, 'sharded', workspaces, rounds, ctx.log);
    const metrics: Record<string, ReturnType<typeof summarize>> = {};
    for (const [layout, split] of [['per-queue', perQueue], ['sharded', sharded]] as const) {
      const keyed = split.queue + split.bucket + split.fleet;
      metrics[`${layout}: commands to queue keys`] = summarize([split.queue], 'commands');
      metrics[`${layout}: commands to workspace bucket keys`] = summarize([split.bucket], 'commands');
      metrics[`${layout}: commands to the prefix's one slot`] = summarize([split.fleet], 'commands');
      metrics[`${layout}: keyless commands`] = summarize([split.keyless], 'commands');
      metrics[`${layout}: share of keyed commands on the prefix's one slot`] = summarize([share(split.fleet, keyed)], 'fraction');
      // One slot lives on one master: the busiest slot's share bounds what any number of masters can spread.
      metrics[`${layout}: busiest slot, share of keyed commands`] = summarize([share(Math.max(...split.slots.values()), keyed)], 'fraction');
      metrics[`${layout}: slots that received commands`] = summarize([split.slots.size], 'slots');
    }
    const keyedOf = (split: Split) => split.queue + split.bucket + split.fleet;
    return {
      params: { workspaces, rounds, layouts: ['per-queue', 'sharded'], checkpointMs: 2_000, hosts: 1 },
      metrics,
      targets: [
        target('per-queue: commands that leave the fleet master (share)', share(perQueue.queue, keyedOf(perQueue)), '>=', 0.5),
        target("sharded: commands left on the prefix's one slot (share)", share(sharded.fleet, keyedOf(sharded)), '<=', 0.15),
      ],
      notes: [
        "queue keys hash to a tag per queue; under sharded each workspace's state hashes to its bucket's tag (128 buckets); what stays on the prefix's one slot is fleet-wide (heartbeats, metrics, events, host registry)",
        "a slot lives on one master: the busiest slot's share is the part no cluster can spread (here a host's persist or checkpoint queue, so it shrinks as hosts are added); slots from each key's CRC16, as Redis computes them",
      ],
    };
  });

export default keySplit;
