/**
 * `vercel-patches`: what tree patches cost or save on the Vercel listed persist, side by side in
 * one run. One fleet against the loopback stand-in (real SDK), two workspaces of the same shape
 * (10,000 files / 130 MB by default, `--files 100000` for ~4 KB files): `patched` persists into
 * the archive as the fleet does (`FLEET_ARCHIVE_TREE_PATCHES=true`: a changed directory stored as
 * a patch of the tree it replaced), `whole` into the same archive with every tree stored whole.
 * Each repeat rewrites the same 1 % of the files in both and persists both, in rotating order.
 */
import { ArchiveStore } from '../src/archive/archive-store.js';
import { persistDeps } from '../src/app/persist-deps.js';
import type { PersistDeps } from '../src/persist/persist-workspace.js';
import { withBenchEnv } from './lib/bench-env.js';
import { bySize, type SizeResult } from './lib/by-size.js';
import { interleave } from './lib/interleave.js';
import type { BenchContext, BenchResult } from './lib/report.js';
import { pairedRatios, summarize } from './lib/stats.js';
import { startVercelBenchFleet, type MeasuredPersist } from './lib/vercel-bench-fleet.js';
import { CONTENT_SEED, changeFiles, planTree, writeTree } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';

const CHANGED = 0.01;
const VARIANTS = ['patched', 'whole'] as const;
type VariantName = (typeof VARIANTS)[number];

const treeBytes = (files: number) => files * (files <= 10_000 ? 13_000 : 4_096);

async function measure(ctx: BenchContext, files: number, repeats: number, label: string): Promise<SizeResult> {
  return withBenchEnv(`vercel-patches-${files}`, async (env) => {
    const fleet = await startVercelBenchFleet(env);
    const base = persistDeps(fleet.services);
    const deps: Record<VariantName, PersistDeps> = {
      patched: { ...base, archive: new ArchiveStore(base.archive.root, { treePatches: true }) },
      whole: { ...base, archive: new ArchiveStore(base.archive.root, { treePatches: false }) },
    };
    const tree = planTree({ files, totalBytes: treeBytes(files) });
    const content = rng(CONTENT_SEED + files);
    const live = {} as Record<VariantName, string>;
    for (const name of VARIANTS) {
      live[name] = await fleet.provision(`bench-${name}`);
      await writeTree(live[name], tree, content);
      const first = await fleet.persist(`bench-${name}`, deps[name]);
      ctx.log(`${label}${name}: first persist in ${first.ms.toFixed(0)} ms`);
      // Files written in the moments before a persist may be taken again once (the racily-clean rule).
      await fleet.persist(`bench-${name}`, deps[name]);
    }
    const turns: Record<VariantName, MeasuredPersist[]> = { patched: [], whole: [] };
    for (let repeat = 0; repeat < repeats; repeat++) {
      for (const name of VARIANTS) await changeFiles(live[name], tree, CHANGED, repeat, content);
      const one = await interleave(1, { patched: () => fleet.persist('bench-patched', deps.patched), whole: () => fleet.persist('bench-whole', deps.whole) }, undefined, repeat);
      for (const name of VARIANTS) {
        if (one[name][0]!.result.unchanged) throw new Error(`bench: the ${name} turn persist found no change`);
        turns[name].push(one[name][0]!);
      }
      ctx.log(`${label}repeat ${repeat + 1}: patched ${turns.patched[repeat]!.ms.toFixed(0)} ms, whole ${turns.whole[repeat]!.ms.toFixed(0)} ms`);
    }
    const ms = (name: VariantName) => turns[name].map((t) => t.ms);
    const trees = (name: VariantName) => turns[name].map((t) => t.result.newTrees ?? 0);
    return {
      params: { files, totalMB: treeBytes(files) / 1e6, changedPct: CHANGED * 100, repeats },
      metrics: {
        patched_turn_persist_ms: summarize(ms('patched'), 'ms'),
        whole_turn_persist_ms: summarize(ms('whole'), 'ms'),
        'patched / whole persist_ms': summarize(pairedRatios(ms('patched'), ms('whole')), 'ratio'),
        patched_new_trees: summarize(trees('patched'), 'trees'),
        whole_new_trees: summarize(trees('whole'), 'trees'),
      },
      profile: {},
      targets: [],
      notes: ['Both workspaces persist into one archive; only how a changed directory is stored differs (patch of the tree it replaced, or whole).'],
    };
  });
}

export default async function vercelPatchesBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 5;
  return bySize(10_000, 500, { repeats, changedPct: CHANGED * 100 }, (files, label) => measure(ctx, files, repeats, label));
}
