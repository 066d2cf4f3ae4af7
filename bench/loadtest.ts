import { randomBytes } from 'node:crypto';
/**
 * `npm run loadtest -- provision [--requests N] [--workspaces W] [--producers P] [--workers K]`:
 * runs the provisioning load test against a private redis-server and prints one JSON object.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/lib/free-port.js';
import { Redis } from 'ioredis';
import { runProvisionLoad } from './provision-load.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};


async function main(): Promise<void> {
  const which = args.find((a) => !a.startsWith('--')) ?? 'provision';
  if (which !== 'provision') throw new Error(`unknown load test ${which} (known: provision)`);
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-loadtest-'));
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
      env: { REDIS_URL: url, FLEET_HOME: path.join(dir, 'home'), FLEET_LOG_LEVEL: 'warn', FLEET_SHUTDOWN_FLUSH_MS: '0', FLEET_HEARTBEAT_INTERVAL_MS: '1000', ...(process.env.LOADTEST_CONCURRENCY ? { FLEET_CONCURRENCY: process.env.LOADTEST_CONCURRENCY } : {}) },
      requests: flag('requests', 1_000),
      workspaces: flag('workspaces', 100),
      producers: flag('producers', 10),
      workers: flag('workers', 4),
    });
    process.stdout.write(`${JSON.stringify({ loadtest: 'provision', ...result })}\n`);
  } finally {
    redis.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
