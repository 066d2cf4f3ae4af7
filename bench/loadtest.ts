import { randomBytes } from 'node:crypto';
/**
 * `npm run loadtest -- provision [--requests N] [--workspaces W] [--producers P] [--workers K]
 * [--reuses N] [--restores N] [--topology single|cluster] [--layout single-slot|per-queue|sharded]`:
 * runs the provisioning load test (in that FLEET_REDIS_KEY_LAYOUT) against
 * a private redis-server (or a private 3-master + 3-replica Redis Cluster) and prints one JSON
 * object; `--reuses` and `--restores` time warm reuses and restores from the archive afterwards.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/lib/free-port.js';
import { Redis } from 'ioredis';
import { runProvisionLoad } from './provision-load.js';
import { RedisCluster } from '../test/helpers/redis-cluster.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};


async function main(): Promise<void> {
  const which = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? 'provision';
  const topology = args.includes('--topology') ? args[args.indexOf('--topology') + 1] : 'single';
  if (topology !== 'single' && topology !== 'cluster') throw new Error(`--topology: must be single or cluster (got ${topology})`);
  const layout = args.includes('--layout') ? args[args.indexOf('--layout') + 1]! : 'single-slot';
  if (!['single-slot', 'per-queue', 'sharded'].includes(layout)) throw new Error(`--layout: must be single-slot, per-queue or sharded (got ${layout})`);
  if (which !== 'provision') throw new Error(`unknown load test ${which} (known: provision)`);
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-loadtest-'));
  const teardowns: (() => Promise<void>)[] = [];
  const cluster = topology === 'cluster' ? await RedisCluster.start(3, 1, (teardown) => teardowns.push(teardown)) : null;
  const port = await freePort();
  const password = randomBytes(16).toString('hex');
  const redis = spawn('redis-server', ['--requirepass', password, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const url = `redis://:${password}@127.0.0.1:${port}`;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    const ok = await probe.connect().then(() => probe.ping()).then(() => true, () => false);
    probe.disconnect();
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    const result = await runProvisionLoad({
      env: { REDIS_URL: url, ...(cluster ? cluster.env : {}), FLEET_HOME: path.join(dir, 'home'), FLEET_LOG_LEVEL: 'warn', FLEET_SHUTDOWN_FLUSH_MS: '0', FLEET_HEARTBEAT_INTERVAL_MS: '1000', FLEET_REDIS_KEY_LAYOUT: layout, ...(process.env.LOADTEST_CONCURRENCY ? { FLEET_CONCURRENCY: process.env.LOADTEST_CONCURRENCY } : {}) },
      requests: flag('requests', 1_000),
      workspaces: flag('workspaces', 100),
      producers: flag('producers', 10),
      workers: flag('workers', 4),
      reuses: flag('reuses', 0),
      restores: flag('restores', 0),
    });
    process.stdout.write(`${JSON.stringify({ loadtest: 'provision', topology, layout, ...result })}\n`);
  } finally {
    redis.kill('SIGKILL');
    for (const teardown of teardowns.reverse()) await teardown();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
