/**
 * Backfill sweep throughput against a bare `rsync` of the same legacy data, measured in the
 * same run: 50 workspaces × 1,000 files in the flat blob layout, swept into a fresh archive by
 * a real in-process `backfill` worker (lease, per-workspace lock, hard-linked revisions, fsync,
 * manifest, checksum verification, record/attach/flip, migrated mark), versus
 * `rsync -a legacy/ dest/ && sync -f dest` (a copy with no verification, no manifest, no
 * revision). Variants alternate within each repeat (order rotating) so machine drift hits both.
 *
 *   npx tsx bench/backfill.ts [--repeats N] [--workspaces N] [--files N] [--concurrency N]
 *
 * Prints one JSON object on stdout and a small table on stderr. `runBackfillBench()` is the
 * same thing for the `npm run bench` runner (the default export adapts it to that runner).
 */
import type { BenchResult } from './lib/report.js';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeBlobName } from '../src/backfill/blob-name.js';
import { loadConfig } from '../src/config.js';
import { startEmbeddedRedis } from '../src/embedded/embedded-redis.js';
import { createLogger } from '../src/logger.js';
import { createFleetClient } from '../src/producers/fleet-client.js';
import { startFleetProcess } from '../src/app/fleet-process.js';
import { rng } from '../test/helpers/rng.js';
import { scaled } from './lib/scale.js';
import { summarize, type Summary } from './lib/stats.js';

export interface BackfillBenchOptions {
  readonly workspaces?: number;
  readonly filesPerWorkspace?: number;
  readonly repeats?: number;
  /** FLEET_CONCURRENCY of the worker (the sweep backfills min(4, this) workspaces at once). @default 4 */
  readonly concurrency?: number;
  /** Progress lines (stderr by default). */
  readonly log?: (line: string) => void;
}

// First line of a tool's version output.
function version(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0]!.trim();
  } catch {
    return 'unavailable';
  }
}

// Writes the legacy blob store: source-tree-like paths, 256 B – 6 KiB of random bytes each (seeded: the same data set every run).
async function writeDataset(root: string, workspaces: number, files: number): Promise<{ files: number; bytes: number }> {
  const random = rng(42);
  let bytes = 0;
  for (let w = 0; w < workspaces; w++) {
    const dir = path.join(root, `bench-ws-${String(w).padStart(3, '0')}`);
    await mkdir(dir, { recursive: true });
    for (let f = 0; f < files; f++) {
      const size = 256 + Math.floor(random() * 5_888);
      const content = Buffer.alloc(size);
      for (let i = 0; i < size; i += 4) content.writeUInt32LE(Math.floor(random() * 0x1_0000_0000), Math.min(i, size - 4));
      await writeFile(path.join(dir, encodeBlobName(`pkg${f % 7}/mod${f % 23}/file-${f}.ts`).toString()), content);
      bytes += size;
    }
  }
  return { files: workspaces * files, bytes };
}

// One sweep into a fresh archive through a real in-process backfill worker; returns seconds.
async function sweepOnce(redisUrl: string, legacyRoot: string, home: string, prefix: string, concurrency: number): Promise<number> {
  const config = loadConfig({ REDIS_URL: redisUrl, FLEET_HOME: home, FLEET_LEGACY_ROOT: legacyRoot, FLEET_PREFIX: prefix, FLEET_LOG_LEVEL: 'silent', FLEET_CONCURRENCY: String(concurrency), PATH: process.env.PATH });
  const fleet = await startFleetProcess({ config, queues: ['backfill'], logger: createLogger({ level: 'silent' }), installSchedules: false });
  const client = createFleetClient({ config });
  try {
    const started = performance.now();
    const { result } = await client.backfill({ kind: 'sweep', source: 'blob', batch: 10, ratePerSec: 10_000 }, { wait: true, timeoutMs: 3_600_000 });
    const seconds = (performance.now() - started) / 1000;
    const r = result as { status: string; migrated: number; failed: number };
    if (r.status !== 'completed' || r.failed !== 0) throw new Error(`sweep did not complete cleanly: ${JSON.stringify(result)}`);
    return seconds;
  } finally {
    await client.close();
    await fleet.close();
  }
}

// A bare rsync of the legacy data plus a filesystem sync (the backfill is durable too); returns seconds.
function rsyncOnce(legacyRoot: string, dest: string): number {
  const started = performance.now();
  execFileSync('rsync', ['-a', `${legacyRoot}/`, `${dest}/`]);
  execFileSync('sync', ['-f', dest]);
  return (performance.now() - started) / 1000;
}

/** Runs the benchmark and returns its report (also what the standalone run prints). */
export async function runBackfillBench(options: BackfillBenchOptions = {}): Promise<BenchResult & Record<string, unknown>> {
  const workspaces = options.workspaces ?? scaled(50, 5);
  const filesPerWorkspace = options.filesPerWorkspace ?? scaled(1_000, 100);
  const repeats = options.repeats ?? 3;
  const concurrency = options.concurrency ?? 4;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const root = await mkdtemp(path.join(os.tmpdir(), 'bench-backfill-'));
  const redis = await startEmbeddedRedis({ home: path.join(root, 'redis-home'), logger: createLogger({ level: 'silent' }), systemPath: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' });
  const started = Date.now();
  try {
    const legacyRoot = path.join(root, 'legacy');
    log(`writing ${workspaces} × ${filesPerWorkspace} legacy files ...`);
    const dataset = await writeDataset(legacyRoot, workspaces, filesPerWorkspace);
    execFileSync('sync', ['-f', root]);
    const samples = { backfill: [] as number[], rsync: [] as number[] };
    const retried: string[] = [];
    const loadBefore = os.loadavg();
    for (let repeat = 0; repeat < repeats; repeat++) {
      const order = repeat % 2 === 0 ? (['backfill', 'rsync'] as const) : (['rsync', 'backfill'] as const);
      for (const variant of order) {
        const out = path.join(root, `${variant}-${repeat}`);
        await mkdir(out, { recursive: true });
        execFileSync('sync', ['-f', root]);
        let seconds: number;
        try {
          seconds = variant === 'backfill' ? await sweepOnce(redis.url, legacyRoot, out, `{bench-${repeat}}`, concurrency) : rsyncOnce(legacyRoot, out);
        } catch (error) {
          // A shared machine may kill a child (e.g. a chaos test): measure this sample again, once.
          log(`repeat ${repeat + 1}/${repeats} ${variant} failed (${(error as Error).message.split('\n')[0]}); measuring it again`);
          retried.push(`${variant} repeat ${repeat + 1}: ${(error as Error).message.split('\n')[0]}`);
          await rm(out, { recursive: true, force: true });
          await mkdir(out, { recursive: true });
          seconds = variant === 'backfill' ? await sweepOnce(redis.url, legacyRoot, out, `{bench-${repeat}-again}`, concurrency) : rsyncOnce(legacyRoot, out);
        }
        samples[variant].push(seconds);
        log(`repeat ${repeat + 1}/${repeats} ${variant}: ${seconds.toFixed(2)} s (${Math.round(dataset.files / seconds)} files/s)`);
        await rm(out, { recursive: true, force: true });
      }
    }
    const mb = dataset.bytes / 1e6;
    const metrics = {
      'backfill files/s': summarize(samples.backfill.map((s) => dataset.files / s), 'files/s'),
      'rsync files/s': summarize(samples.rsync.map((s) => dataset.files / s), 'files/s'),
      'backfill MB/s': summarize(samples.backfill.map((s) => mb / s), 'MB/s'),
      'rsync MB/s': summarize(samples.rsync.map((s) => mb / s), 'MB/s'),
      'backfill seconds': summarize(samples.backfill, 's'),
      'rsync seconds': summarize(samples.rsync, 's'),
      'backfill/rsync time': summarize(samples.backfill.map((s, i) => s / samples.rsync[i]!), 'x'),
    };
    const cpus = os.cpus();
    return {
      benchmark: 'backfill',
      command: 'npx tsx bench/backfill.ts',
      startedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      params: { workspaces, filesPerWorkspace, files: dataset.files, bytes: dataset.bytes, repeats, batch: 10, ratePerSec: 10_000, workerConcurrency: concurrency, sweepConcurrency: Math.min(4, concurrency) },
      machine: {
        cpus: { model: cpus[0]?.model.trim() ?? 'unknown', count: cpus.length },
        node: process.version,
        os: `${os.type()} ${os.release()} ${os.arch()}`,
        rsync: version('rsync', ['--version']),
        redisServer: version('redis-server', ['--version']),
        loadavgBefore: loadBefore,
        loadavgAfter: os.loadavg(),
      },
      metrics,
      targets: [],
      notes: [
        'backfill = whole sweep through a real backfill worker: legacy listing, per-workspace lock, revision build, fsync (sync -f), manifest scan, checksum re-read of every copied file, record/attach/flip, migrated mark',
        'rsync = rsync -a of the same blob directory plus sync -f: no verification, manifest or revision; page cache warm for both',
        ...retried.map((r) => `sample measured again after a failure: ${r}`),
      ],
    };
  } finally {
    await redis.stop();
    await rm(root, { recursive: true, force: true });
  }
}

/** Adapter for the `npm run bench` runner (`(ctx) => Promise<result>`). */
export default (ctx: { repeats: number | undefined; log(line: string): void }) => runBackfillBench({ ...(ctx.repeats ? { repeats: ctx.repeats } : {}), log: (line) => ctx.log(line) });

// Standalone: `npx tsx bench/backfill.ts [--repeats N] [--workspaces N] [--files N] [--concurrency N]`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? undefined : Number(process.argv[i + 1]);
  };
  const report = (await runBackfillBench({ repeats: arg('repeats'), workspaces: arg('workspaces'), filesPerWorkspace: arg('files'), concurrency: arg('concurrency') })) as { metrics: Record<string, Summary> };
  const rows = Object.entries(report.metrics).map(([name, s]) => `${name.padEnd(22)} ${String(s.median).padStart(10)} ${String(s.min).padStart(10)} ${String(s.max).padStart(10)}  ${s.unit}`);
  process.stderr.write(`${'metric'.padEnd(22)} ${'median'.padStart(10)} ${'min'.padStart(10)} ${'max'.padStart(10)}\n${rows.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
