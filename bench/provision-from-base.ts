/**
 * `provision-from-base`: time to a ready local sandbox from a baked base snapshot of 5,000 files
 * vs an empty create plus running the same setup, interleaved in one run.
 */
import { bakeBase } from '../src/bake/bake-base.js';
import { BaseManifest } from '../src/queues/base-manifest.js';
import { createLogger } from '../src/logger.js';
import { provisionWorkspace } from '../src/provision/provision-workspace.js';
import { parsePayload } from '../src/queues/payload.js';
import { createRedis } from '../src/redis.js';
import { createServices } from '../src/app/services.js';
import type { ProcessorContext } from '../src/jobs/processor-context.js';
import { withBenchEnv } from './lib/bench-env.js';
import { interleave } from './lib/interleave.js';
import { target, type Benchmark } from './lib/report.js';
import { pairedRatios, summarize } from './lib/stats.js';
import { scaled } from './lib/scale.js';

const FILES = scaled(5_000, 500);
// The setup both variants share: 5,000 files of ~4 KiB in 100 directories (an `npm install`-like tree).
const SETUP = `node -e "const fs=require('fs');for(let d=0;d<100;d++){fs.mkdirSync('node_modules/pkg'+d,{recursive:true});for(let f=0;f<${FILES / 100};f++)fs.writeFileSync('node_modules/pkg'+d+'/f'+f+'.js','module.exports='+JSON.stringify('x'.repeat(4000))+';\\\\n')}"`;

const provisionFromBase: Benchmark = async (ctx) => {
  const repeats = ctx.repeats ?? 5;
  return withBenchEnv('provision-from-base', async (env) => {
    const config = env.config();
    const redis = createRedis({ url: env.redisUrl, role: 'client', commandTimeoutMs: 10_000, name: 'bench' });
    env.releasers.add('bench connection', () => void redis.disconnect());
    const logger = createLogger({ level: 'silent' });
    const services = createServices({ config, redis, logger });
    env.releasers.add('services', () => services.close());
    await redis.zadd(services.keys.hosts(), Date.now() + 3_600_000, config.hostId);
    const jobCtx = (): ProcessorContext => ({ logger, signal: AbortSignal.timeout(600_000), queue: 'bench', jobId: 'bench', attempt: 1, maxAttempts: 1, deadlineAt: Date.now() + 600_000, progress: async () => undefined });

    const manifest = parsePayload('manifest', BaseManifest, { schemaVersion: 1, name: 'bench-base', runtime: 'node22', setup: [SETUP], smoke: [`test $(find node_modules -type f | wc -l) -eq ${FILES}`] });
    const bakeStarted = Date.now();
    await bakeBase(services, { manifest, activate: true, provider: 'local' }, jobCtx());
    const bakeMs = Date.now() - bakeStarted;
    ctx.log(`baked a ${FILES}-file base in ${bakeMs} ms`);

    let n = 0;
    const runs = await interleave(
      repeats,
      {
        from_base: async () => {
          const t = performance.now();
          const r = await provisionWorkspace(services, { workspaceId: `from-base-${n++}`, provider: 'local', lane: 'default' }, jobCtx());
          if (r.outcome !== 'created-from-base') throw new Error(`expected created-from-base, got ${r.outcome}`);
          return performance.now() - t;
        },
        empty_plus_setup: async () => {
          const t = performance.now();
          const r = await provisionWorkspace(services, { workspaceId: `empty-${n++}`, provider: 'local', lane: 'no-base' }, jobCtx());
          if (r.outcome !== 'created-empty') throw new Error(`expected created-empty, got ${r.outcome}`);
          const setup = await services.providers.get('local').exec(r.handle, { cmd: ['sh', '-c', SETUP], env: { PATH: config.systemPath }, timeoutMs: 600_000, signal: AbortSignal.timeout(600_000) });
          if (setup.exitCode !== 0) throw new Error(`setup failed: ${setup.stderr}`);
          return performance.now() - t;
        },
      },
      (variant, repeat, ms) => ctx.log(`repeat ${repeat + 1}: ${variant} ${Math.round(ms)} ms`),
    );
    const fromBase = summarize(runs.from_base, 'ms');
    const empty = summarize(runs.empty_plus_setup, 'ms');
    const speedup = summarize(pairedRatios(runs.empty_plus_setup, runs.from_base), 'x');
    return {
      params: { files: FILES, repeats, setup: 'one node process writing 5,000 files of ~4 KiB (a local, network-free stand-in for an install)' },
      metrics: { from_base_ms: fromBase, empty_plus_setup_ms: empty, speedup },
      targets: [target('from-base faster than empty + setup (x)', speedup.median, '>=', 1)],
      notes: [
        `bake itself: ${bakeMs} ms (once per manifest hash)`,
        'from-base copies the snapshot with cp --reflink=auto (hard links would let in-place writes reach the base); on ext4 that is a full copy, so against a setup that only writes files locally the two cost about the same. Real setups download and compile, which the base skips entirely.',
      ],
    };
  });
};

export default provisionFromBase;
