/**
 * `key-split` (issue 17): under `FLEET_REDIS_KEY_LAYOUT=per-queue`, how the fleet's Redis commands
 * divide between BullMQ's queue keys (a tag per queue, spread over a cluster's masters) and the
 * fleet's own keys (the prefix's one slot: what stays on one master).
 *
 * One host runs the Procfile's provision, persist and checkpoint processes; W workspaces do turns
 * (a warm reuse, a file, a turn-end persist acknowledged) with checkpoints every 2 s. Every command
 * Redis receives meanwhile is read with MONITOR and counted by its first key's hash tag.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ManagedProcess } from '../chaos/fleet-processes.js';
import { createFleetClient } from '../src/producers/fleet-client.js';
import { LocalProvider } from '../src/providers/local/local-provider.js';
import type { ProvisionResult } from '../src/queues/provision.js';
import { withBenchEnv } from './lib/bench-env.js';
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

const keySplit: Benchmark = async (ctx) =>
  withBenchEnv('key-split', async (env) => {
    const workspaces = Math.max(5, Math.round(10 * scale()));
    const rounds = 4;
    const settings = { FLEET_HOST_ID: 'split', FLEET_CHECKPOINT_INTERVAL_MS: '2000', FLEET_LOG_LEVEL: 'error', FLEET_REDIS_KEY_LAYOUT: 'per-queue' };
    const processes = ['provision', 'persist', 'checkpoint'].map((queues) => new ManagedProcess({ name: queues, hostId: 'split', queues, env: env.fleetEnv(settings) }));
    env.releasers.add('fleet processes', () => Promise.all(processes.map((p) => p.kill('SIGTERM'))).then(() => undefined));
    await Promise.all(processes.map((p) => p.start()));
    const config = env.config(settings);
    const client = createFleetClient({ config });
    env.releasers.add('client', () => client.close());
    const local = new LocalProvider({ hostId: 'split', liveRoot: config.paths.liveRoot, snapshotRoot: config.paths.snapshotRoot, archiveRoot: config.paths.archiveRoot, systemPath: config.systemPath, copyTimeoutMs: 60_000 });
    const placed: ProvisionResult[] = [];
    for (let i = 0; i < workspaces; i++) placed.push((await client.provision({ workspaceId: `split-${i}` }, { wait: true })).result as ProvisionResult);

    const [before, after] = config.redis.prefix.split(/\{[^}]*\}/) as [string, string];
    const tag = /\{([^}]*)\}/.exec(config.redis.prefix)![1]!;
    const fleetTag = `${before}{${tag}}${after}`;
    const queueTag = `${before}{${tag}:`;
    const counts = { queue: 0, fleet: 0, keyless: 0 };
    // MONITOR through redis-cli, line-buffered, one line per command (ioredis' monitor mode throws from its
    // socket handler when a line arrives as it closes, which would crash the run).
    // (redis-cli 7.0 fails AUTH for `-u redis://:password@…`, an empty user name: the parts are passed.)
    const redisAt = new URL(env.redisUrl);
    const monitor = spawn('stdbuf', ['-oL', 'redis-cli', '--no-auth-warning', '-h', redisAt.hostname, '-p', redisAt.port, ...(redisAt.password ? ['-a', decodeURIComponent(redisAt.password)] : []), 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] });
    env.releasers.add('monitor', () => void monitor.kill('SIGKILL'));
    let counting = true;
    createInterface({ input: monitor.stdout! }).on('line', (line) => {
      if (!counting || !line.includes('] "')) return;
      const args = [...line.slice(line.indexOf(']') + 1).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
      const key = firstKey(args);
      if (key?.startsWith(queueTag)) counts.queue += 1;
      else if (key?.startsWith(fleetTag)) counts.fleet += 1;
      else counts.keyless += 1;
    });
    // Counting starts once redis-cli is in monitor mode (it prints OK first).
    await new Promise<void>((resolve, reject) => {
      monitor.once('error', reject);
      monitor.stdout!.once('data', () => resolve());
    });
    ctx.log(`${workspaces} workspaces x ${rounds} turns, checkpoints every 2 s, under MONITOR`);
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
    const keyed = counts.queue + counts.fleet;
    const queueShare = keyed === 0 ? 0 : counts.queue / keyed;
    return {
      params: { workspaces, rounds, layout: 'per-queue', checkpointMs: 2_000 },
      metrics: {
        'commands to queue keys': summarize([counts.queue], 'commands'),
        "commands to the fleet's own keys": summarize([counts.fleet], 'commands'),
        'keyless commands': summarize([counts.keyless], 'commands'),
        'queue share of keyed commands': summarize([Math.round(queueShare * 1000) / 1000], 'fraction'),
      },
      targets: [target('commands that leave the fleet master under per-queue (share)', Math.round(queueShare * 1000) / 1000, '>=', 0.5)],
      notes: ["queue keys hash to a tag per queue and spread over a cluster's masters; the fleet's own keys stay in the prefix's one slot"],
    };
  });

export default keySplit;
