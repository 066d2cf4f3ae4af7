/**
 * `vercel-persist`: what a persist of a Vercel workspace moves through the SDK and how long it
 * takes, the delta path against the whole-tree export it replaced, side by side in one run. The
 * real `@vercel/sandbox` SDK talks to the loopback stand-in (which runs the sandbox's commands on
 * this host); bytes are counted at the SDK's `fetch`, request and response bodies
 * (bench/lib/counting-fetch.ts).
 *
 * Two workspaces of the same shape (10,000 files / 130 MB by default; `--files 10000,100000`
 * measures each size in turn, ~4 KB files at 100,000; random content, so compression hides
 * nothing), one per path:
 *
 * - delta: this fleet's persist (`listTree`: the listing, a tar of just the changed files
 *   streamed into the store, the revision built from the listing);
 * - whole_tree: the export every persist made before (bench/lib/whole-tree-export.ts: `tar -czf`
 *   of the whole tree in the sandbox, read back, unpacked, walked without a stat cache).
 *
 * The first persist of each is a full transfer. Then each repeat rewrites the same 1 % of the
 * files in both (one agent turn) and persists both, in rotating order: bytes moved by kind and
 * persist duration (the whole-tree export's `openTree` share in the profile), against the changed bytes gzip-compressed and as the
 * smallest tar.gz of just those files. After each turn the delta workspace persists once more
 * with nothing changed (a quiet persist: only the listing should move).
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { PersistDeps } from '../src/persist/persist-workspace.js';
import type { SandboxProvider } from '../src/providers/sandbox-provider.js';
import { persistDeps } from '../src/app/persist-deps.js';
import { delegatingProvider } from '../test/helpers/delegating-provider.js';
import { withBenchEnv } from './lib/bench-env.js';
import { bySize, type SizeResult } from './lib/by-size.js';
import type { TrafficKind } from './lib/counting-fetch.js';
import { interleave } from './lib/interleave.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { pairedRatios, summarize, type Summary } from './lib/stats.js';
import { startVercelBenchFleet, type MeasuredPersist, type VercelBenchFleet } from './lib/vercel-bench-fleet.js';
import { wholeTreeExport } from './lib/whole-tree-export.js';
import { CONTENT_SEED, changeFiles, planTree, writeTree, type TreeFile } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';

const CHANGED = 0.01;
const PATHS = ['delta', 'whole_tree'] as const;
type PathName = (typeof PATHS)[number];

// ~13 KB files (a source tree) up to 10,000 files, ~4 KB files (a node_modules tree) above (as the persist bench).
const treeBytes = (files: number) => files * (files <= 10_000 ? 13_000 : 4_096);

interface Changed {
  readonly raw: number;
  readonly gzip: number;
  readonly tarGz: number;
}

// The smallest tar.gz of just `files` (what any tool must ship for the change), and gzip of their contents.
async function changedSizes(live: string, files: readonly TreeFile[], scratch: string): Promise<Changed> {
  const contents = await Promise.all(files.map((f) => readFile(path.join(live, f.rel))));
  const list = path.join(scratch, 'changed.list');
  await writeFile(list, files.map((f) => `./${f.rel}\0`).join(''));
  const tarGz = execFileSync('tar', ['-czf', '-', '--format=gnu', '--null', '--no-recursion', '-T', list], { cwd: live, maxBuffer: 1 << 30 }).length;
  return { raw: contents.reduce((a, c) => a + c.length, 0), gzip: gzipSync(Buffer.concat(contents)).length, tarGz };
}

// Per-kind byte summaries of a series of persists.
function trafficSummaries(runs: readonly MeasuredPersist[], prefix: string): Record<string, Summary> {
  const kinds = Object.keys(runs[0]!.traffic) as TrafficKind[];
  return Object.fromEntries(kinds.map((k) => [`${prefix}${k}_bytes`, summarize(runs.map((r) => r.traffic[k]), 'bytes')]));
}

// Persist dependencies of each path (the fleet's Vercel provider, or the same one exporting the whole tree, without `listTree`), and the last openTree's ms.
function pathDeps(fleet: VercelBenchFleet): { deps: Record<PathName, PersistDeps>; lastOpenTreeMs: () => number } {
  const base = persistDeps(fleet.services);
  const vercel = fleet.services.providers.get('vercel');
  let last = 0;
  const timedOpenTree = (open: SandboxProvider['openTree']): SandboxProvider['openTree'] => async (handle, signal) => {
    const started = performance.now();
    try {
      return await open(handle, signal);
    } finally {
      last = performance.now() - started;
    }
  };
  const whole = delegatingProvider(vercel, { openTree: timedOpenTree(wholeTreeExport(fleet.connection)), listTree: undefined });
  const delta = vercel;
  return { deps: { delta: { ...base, providerFor: () => delta }, whole_tree: { ...base, providerFor: () => whole } }, lastOpenTreeMs: () => last };
}

// The whole measurement at one workspace size.
async function measure(ctx: BenchContext, files: number, repeats: number, label: string): Promise<SizeResult> {
  const totalBytes = treeBytes(files);
  return withBenchEnv(`vercel-persist-${files}`, async (env) => {
    const fleet = await startVercelBenchFleet(env);
    const { deps, lastOpenTreeMs } = pathDeps(fleet);
    const scratch = await env.subdir('scratch');
    const tree = planTree({ files, totalBytes });
    // One stream for both trees and every turn: each tree and each turn gets bytes of its own.
    const content = rng(CONTENT_SEED + files);
    const live = {} as Record<PathName, string>;
    const first = {} as Record<PathName, MeasuredPersist>;
    for (const name of PATHS) {
      live[name] = await fleet.provision(wsOf(name));
      ctx.log(`${label}${name}: writing ${files} files / ${(totalBytes / 1e6).toFixed(0)} MB into the sandbox`);
      await writeTree(live[name], tree, content);
      first[name] = await fleet.persist(wsOf(name), deps[name]);
      ctx.log(`${label}${name}: first persist moved ${first[name].total} bytes in ${first[name].ms.toFixed(0)} ms`);
      // Files written in the moments before a persist may be taken again once (the racily-clean rule).
      await fleet.persist(wsOf(name), deps[name]);
    }

    const turns: Record<PathName, MeasuredPersist[]> = { delta: [], whole_tree: [] };
    const openTreeMs: number[] = [];
    const quiet: MeasuredPersist[] = [];
    const changed: Changed[] = [];
    for (let repeat = 0; repeat < repeats; repeat++) {
      // The same files of both trees (the turn's seed picks them), with new random content.
      const chosen = await changeFiles(live.delta, tree, CHANGED, repeat, content);
      await changeFiles(live.whole_tree, tree, CHANGED, repeat, content);
      changed.push(await changedSizes(live.delta, chosen, scratch));
      const turn = async (name: PathName) => ({ persisted: await fleet.persist(wsOf(name), deps[name]), openTreeMs: name === 'whole_tree' ? lastOpenTreeMs() : 0 });
      const one = await interleave(1, { delta: () => turn('delta'), whole_tree: () => turn('whole_tree') }, undefined, repeat);
      for (const name of PATHS) {
        if (one[name][0]!.persisted.result.unchanged) throw new Error(`bench: the ${name} turn persist found no change`);
        turns[name].push(one[name][0]!.persisted);
        if (name === 'whole_tree') openTreeMs.push(one[name][0]!.openTreeMs);
      }
      quiet.push(await fleet.persist(wsOf('delta'), deps.delta));
      const [d, w] = [turns.delta[repeat]!, turns.whole_tree[repeat]!];
      ctx.log(
        `${label}repeat ${repeat + 1}: ${chosen.length} files / ${changed[repeat]!.raw} bytes changed (gzip ${changed[repeat]!.gzip}); ` +
          `delta moved ${d.total} bytes in ${d.ms.toFixed(0)} ms (listing ${d.traffic.listing}, archive ${d.traffic.archive}), whole tree ${w.total} bytes in ${w.ms.toFixed(0)} ms; ` +
          `quiet delta ${quiet[repeat]!.total} bytes in ${quiet[repeat]!.ms.toFixed(0)} ms`,
      );
    }

    const bytes = (name: PathName) => turns[name].map((t) => t.total);
    const ms = (name: PathName) => turns[name].map((t) => t.ms);
    // The bound: moved <= 1.2 x changed (compressed) + listing, i.e. (moved - listing) / changed gzip <= 1.2.
    const beyondListing = summarize(turns.delta.map((t, i) => (t.total - t.traffic.listing) / changed[i]!.gzip), 'x changed gzip');
    const timeRatio = summarize(pairedRatios(ms('delta'), ms('whole_tree')), 'delta/whole tree');
    const quietExtra = Math.max(...quiet.map((q) => q.traffic.archive + q.traffic.upload));
    return {
      params: { files, totalMB: totalBytes / 1e6, changedPct: CHANGED * 100, changedFiles: Math.max(1, Math.round(files * CHANGED)), repeats, content: 'random (incompressible)' },
      metrics: {
        delta_turn_moved_bytes: summarize(bytes('delta'), 'bytes'),
        whole_tree_turn_moved_bytes: summarize(bytes('whole_tree'), 'bytes'),
        'whole_tree / delta moved bytes': summarize(pairedRatios(bytes('whole_tree'), bytes('delta')), 'x'),
        delta_turn_persist_ms: summarize(ms('delta'), 'ms'),
        whole_tree_turn_persist_ms: summarize(ms('whole_tree'), 'ms'),
        'delta / whole_tree persist_ms': timeRatio,
        delta_quiet_moved_bytes: summarize(quiet.map((q) => q.total), 'bytes'),
        delta_quiet_persist_ms: summarize(quiet.map((q) => q.ms), 'ms'),
        changed_raw_bytes: summarize(changed.map((c) => c.raw), 'bytes'),
        changed_gzip_bytes: summarize(changed.map((c) => c.gzip), 'bytes'),
        changed_tar_gz_bytes: summarize(changed.map((c) => c.tarGz), 'bytes'),
        'delta (moved - listing) / changed gzip': beyondListing,
        delta_first_full_moved_bytes: summarize([first.delta.total], 'bytes'),
        delta_first_full_persist_ms: summarize([first.delta.ms], 'ms'),
        whole_tree_first_moved_bytes: summarize([first.whole_tree.total], 'bytes'),
        whole_tree_first_persist_ms: summarize([first.whole_tree.ms], 'ms'),
      },
      profile: {
        ...trafficSummaries(turns.delta, 'delta.turn.'),
        ...trafficSummaries(quiet, 'delta.quiet.'),
        ...trafficSummaries(turns.whole_tree, 'whole_tree.turn.'),
        'whole_tree.turn.open_tree_ms': summarize(openTreeMs, 'ms'),
        'delta.turn.transferred_files': summarize(turns.delta.map((t) => t.result.transferredFiles ?? 0), 'files'),
      },
      targets: [
        target(`${label}delta turn persist: (bytes moved - listing) / changed bytes gzip (median)`, beyondListing.median, '<=', 1.2),
        target(`${label}delta turn persist: (bytes moved - listing) / changed bytes gzip (worst repeat)`, beyondListing.max, '<=', 1.2),
        target(`${label}delta quiet persist: archive + upload bytes (worst repeat): only the listing moves`, quietExtra, '<=', 0),
        target(`${label}delta / whole-tree export turn persist time (median)`, timeRatio.median, '<', 1),
      ],
      notes: [
        'Bytes are HTTP bodies at the SDK fetch (both ways); headers and TLS are not counted. Command streams are the NDJSON of the sandbox scripts and the ready-marker read.',
        'The stand-in runs on this host: no network latency or bandwidth limit, so the time gap is what the sandbox and host do (tar, gzip, unpack, walk); over a real network the bytes gap adds transfer time on top.',
      ],
    };
  });
}

// The workspace of a path.
function wsOf(name: PathName): string {
  return `bench-${name.replace('_', '-')}`;
}

export default async function vercelPersistBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 5;
  return bySize(10_000, 500, { repeats, changedPct: CHANGED * 100 }, (files, label) => measure(ctx, files, repeats, label));
}
