/**
 * `restore`: the two ways a local restore makes a format 2 revision, side by side in one run,
 * against `cp -a` of the same tree. A generated workspace (10,000 files / 130 MB by default,
 * `--files 100000` for ~4 KB files, a node_modules shape) is stored once; each repeat then makes
 * it into a fresh empty directory three ways, in rotating order, the page cache flushed (`sync`)
 * before each:
 *
 * - `tar`: extractRevision, the revision streamed from the archive into the host's `tar -x`
 *   (what the fleet does, `FLEET_RESTORE_TAR=true`);
 * - `materialize`: materializeRevision, every file made from Node (the restore before);
 * - `cp_a`: `cp -a` of the source tree (the baseline of issue 20's target restore / cp -a ≤ 1.0).
 *
 * CPU per way is this process's plus its children's (tar's, cp's), from /proc/self/stat.
 *
 * `RESTORE_COLD=1`: the page cache is also dropped before each way (`/proc/sys/vm/drop_caches`,
 * root only; the whole machine's cache), so each reads its source from the disk: the restore
 * of a host that has not read the archive lately, against `cp -a` of a tree not read lately.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { extractRevision } from '../src/archive/extract-revision.js';
import { materializeRevision } from '../src/archive/materialize-revision.js';
import { ObjectStore } from '../src/archive/object-store.js';
import { StoreBuilder } from '../src/archive/store-builder.js';
import { DirHandle } from '../src/tree/dir-handle.js';
import { UNLIMITED_TREE } from '../src/tree/tree-limits.js';
import { withBenchEnv } from './lib/bench-env.js';
import { bySize, type SizeResult } from './lib/by-size.js';
import { interleave } from './lib/interleave.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { scaled } from './lib/scale.js';
import { pairedRatios, summarize } from './lib/stats.js';
import { CONTENT_SEED, planTree, writeTree } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';

const run = promisify(execFile);
const SYSTEM_PATH = process.env.PATH ?? '/usr/bin:/bin';
const TIMEOUT_MS = 30 * 60_000;
const WAYS = ['tar', 'materialize', 'cp_a'] as const;
const DROP_CACHES = '/proc/sys/vm/drop_caches';
type Way = (typeof WAYS)[number];

interface Sample {
  readonly ms: number;
  readonly cpuMs: number;
}

// CPU of this process and of its waited-for children so far (ms): utime, stime, cutime, cstime.
async function cpuMs(): Promise<number> {
  const fields = (await readFile('/proc/self/stat', 'utf8')).split(') ')[1]!.split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return (ticks * 1000) / 100;
}

// RESTORE_COLD: `1` drops the page cache before each way, `0` or unset keeps it.
function coldCache(): boolean {
  const raw = process.env.RESTORE_COLD ?? '0';
  if (raw !== '0' && raw !== '1') throw new Error(`RESTORE_COLD: expected 0 or 1, got ${JSON.stringify(raw)}`);
  return raw === '1';
}

// Writes dirty pages back, then (cold) drops the clean ones: every way starts from the disk.
async function flushCache(cold: boolean): Promise<void> {
  await run('sync');
  if (!cold) return;
  await writeFile(DROP_CACHES, '3\n').catch((error: unknown) => {
    throw new Error(`RESTORE_COLD=1: cannot drop the page cache (${DROP_CACHES}: ${(error as NodeJS.ErrnoException).code ?? String(error)}); run as root or without RESTORE_COLD`);
  });
}

async function measure(ctx: BenchContext, files: number, repeats: number, label: string, cold: boolean): Promise<SizeResult> {
  const totalBytes = files <= 10_000 ? scaled(130 * 1_000_000, 5_000_000) * (files / scaled(10_000, 500)) : files * 4_096;
  return withBenchEnv(`restore-${files}`, async (env) => {
    const source = await env.subdir('source');
    const out = await env.subdir('out');
    ctx.log(`${label}writing ${files} files / ${(totalBytes / 1e6).toFixed(0)} MB`);
    await writeTree(source, planTree({ files, totalBytes }), rng(CONTENT_SEED + files));
    const store = new ObjectStore(path.join(env.dir, 'archive'));
    const src = await DirHandle.open(source);
    const root = await new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(TIMEOUT_MS) }).build(src).finally(() => src.close());
    const into = async (dir: string, make: (dest: DirHandle) => Promise<unknown>) => {
      await mkdir(dir, { mode: 0o700 });
      const dest = await DirHandle.open(dir);
      try {
        await make(dest);
      } finally {
        await dest.close();
      }
    };
    const options = () => ({ systemPath: SYSTEM_PATH, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const made: Record<Way, (dir: string) => Promise<unknown>> = {
      tar: (dir) =>
        into(dir, async (dest) => {
          const extracted = await extractRevision(store, root, dest, { ...options(), timeoutMs: TIMEOUT_MS });
          if (extracted.via !== 'tar') throw new Error(`bench: the restore did not go through tar (${extracted.tarFailure})`);
          if (extracted.readAhead) ctx.log(`${label}tar read ${extracted.readAhead} objects ahead (its synchronous reads were slow)`);
        }),
      materialize: (dir) => into(dir, (dest) => materializeRevision(store, root, dest, options())),
      cp_a: (dir) => run('cp', ['-a', `${source}/.`, dir]),
    };
    const way = (name: Way) => async (repeat: number): Promise<Sample> => {
      const dir = path.join(out, `${name}-${repeat}`);
      await flushCache(cold);
      const cpu = await cpuMs();
      const started = performance.now();
      await made[name](dir);
      const sample = { ms: performance.now() - started, cpuMs: (await cpuMs()) - cpu };
      await rm(dir, { recursive: true, force: true });
      return sample;
    };
    const samples = await interleave(repeats, { tar: way('tar'), materialize: way('materialize'), cp_a: way('cp_a') }, (name, repeat, sample) =>
      ctx.log(`${label}repeat ${repeat + 1}: ${name} ${sample.ms.toFixed(0)} ms (cpu ${sample.cpuMs.toFixed(0)} ms)`),
    );
    const ms = (name: Way) => samples[name].map((s) => s.ms);
    const cpu = (name: Way) => samples[name].map((s) => s.cpuMs);
    const tarRatio = summarize(pairedRatios(ms('tar'), ms('cp_a')), 'tar/cp -a');
    return {
      params: { files, totalMB: totalBytes / 1e6, repeats, cold },
      metrics: {
        tar_ms: summarize(ms('tar'), 'ms'),
        materialize_ms: summarize(ms('materialize'), 'ms'),
        cp_a_ms: summarize(ms('cp_a'), 'ms'),
        'tar / cp -a': tarRatio,
        'materialize / cp -a': summarize(pairedRatios(ms('materialize'), ms('cp_a')), 'materialize/cp -a'),
        'tar / materialize': summarize(pairedRatios(ms('tar'), ms('materialize')), 'tar/materialize'),
        tar_cpu_ms: summarize(cpu('tar'), 'ms'),
        materialize_cpu_ms: summarize(cpu('materialize'), 'ms'),
        cp_a_cpu_ms: summarize(cpu('cp_a'), 'ms'),
      },
      profile: {},
      targets: [target(`${label}restore (tar) / cp -a`, tarRatio.median, '<=', 1)],
      notes: [
        'Each way makes the same stored revision into a fresh directory; CPU counts this process and its children (tar, cp).',
        cold ? 'Cold: the page cache was dropped before each way (RESTORE_COLD=1); each read its source from the disk.' : 'Warm: the source trees and the archive were in the page cache (RESTORE_COLD=1 drops it).',
      ],
    };
  });
}

export default async function restoreBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 5;
  const cold = coldCache();
  return bySize(10_000, 500, { repeats, cold }, (files, label) => measure(ctx, files, repeats, label, cold));
}
