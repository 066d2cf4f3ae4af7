/**
 * `provision-from-base`: time to a ready local sandbox from a baked base snapshot of 5,000 files
 * vs an empty create plus running the same setup, measured interleaved in one run.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/lib/free-port.js';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { bakeBase } from '../src/bake/bake-base.js';
import { BaseManifest } from '../src/bake/manifest.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { provisionWorkspace } from '../src/provision/provision-workspace.js';
import { parsePayload } from '../src/queues/payload.js';
import { createRedis } from '../src/redis.js';
import { createServices } from '../src/runtime/services.js';
import type { ProcessorContext } from '../src/workers/processor-context.js';

const FILES = 5_000;
// The setup both variants share: 5,000 files of ~4 KiB in 100 directories (an `npm install`-like tree).
const SETUP = `node -e "const fs=require('fs');for(let d=0;d<100;d++){fs.mkdirSync('node_modules/pkg'+d,{recursive:true});for(let f=0;f<${FILES / 100};f++)fs.writeFileSync('node_modules/pkg'+d+'/f'+f+'.js','module.exports='+JSON.stringify('x'.repeat(4000))+';\\\\n')}"`;

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted[sorted.length - 1]!, runs: sorted.length };
};


export async function runProvisionFromBaseBench(repeats = 5): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-bench-base-'));
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    const ok = await probe.connect().then(() => probe.ping()).then(() => true, () => false);
    probe.disconnect();
    if (ok) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const config = loadConfig({ REDIS_URL: url, FLEET_HOME: path.join(dir, 'home'), FLEET_LOG_LEVEL: 'silent', PATH: process.env.PATH ?? '/usr/bin:/bin' });
  const redis = createRedis({ url, role: 'client', commandTimeoutMs: 10_000, name: 'bench' });
  const logger = createLogger({ level: 'silent' });
  const services = createServices({ config, redis, logger });
  await redis.zadd(services.keys.hosts(), Date.now() + 3_600_000, config.hostId);
  const ctx = (): ProcessorContext => ({ logger, signal: AbortSignal.timeout(600_000), queue: 'bench', jobId: 'bench', attempt: 1, maxAttempts: 1, deadlineAt: Date.now() + 600_000, progress: async () => undefined });
  try {
    const manifest = parsePayload('manifest', BaseManifest, { schemaVersion: 1, name: 'bench-base', runtime: 'node22', setup: [SETUP], smoke: [`test $(find node_modules -type f | wc -l) -eq ${FILES}`] });
    const bakeStarted = Date.now();
    const baked = await bakeBase(services, { manifest, activate: true, provider: 'local' }, ctx());
    const bakeMs = Date.now() - bakeStarted;
    const fromBase: number[] = [];
    const emptyPlusSetup: number[] = [];
    for (let i = 0; i < repeats; i++) {
      let t = Date.now();
      const a = await provisionWorkspace(services, { workspaceId: `from-base-${i}`, provider: 'local', lane: 'default' }, ctx());
      if (a.outcome !== 'created-from-base') throw new Error(`expected created-from-base, got ${a.outcome}`);
      fromBase.push(Date.now() - t);

      t = Date.now();
      const b = await provisionWorkspace(services, { workspaceId: `empty-${i}`, provider: 'local', lane: 'other-lane' }, ctx());
      if (b.outcome !== 'created-empty') throw new Error(`expected created-empty, got ${b.outcome}`);
      const setup = await services.providers.get('local').exec(b.handle, { cmd: ['sh', '-c', SETUP], env: { PATH: config.systemPath }, timeoutMs: 600_000, signal: AbortSignal.timeout(600_000) });
      if (setup.exitCode !== 0) throw new Error(`setup failed: ${setup.stderr}`);
      emptyPlusSetup.push(Date.now() - t);
    }
    const base = stats(fromBase);
    const empty = stats(emptyPlusSetup);
    return {
      benchmark: 'provision-from-base',
      files: FILES,
      bake_ms: bakeMs,
      snapshot: baked.snapshotId,
      from_base_ms: base,
      empty_plus_setup_ms: empty,
      speedup: Number((empty.median / base.median).toFixed(2)),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    };
  } finally {
    await services.close();
    redis.disconnect();
    server.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await runProvisionFromBaseBench(Number(process.argv[2] ?? 5));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
