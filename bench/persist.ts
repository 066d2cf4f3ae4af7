/**
 * `persist` (and restore): one generated workspace of 10,000 files / ~130 MB; each repeat
 * rewrites 1 % of the files (one agent turn) and measures, interleaved in rotating order:
 *
 * - persist_ms: the fleet's turn-end reconcile (`persistWorkspace` on a provisioned local
 *   workspace: hard-link unchanged files + rsync the changed ones into a new revision, scan/hash, durability, manifest, attach, flip)
 * - bare_rsync_ms: `rsync -rlptD --delete` of the same change into a plain in-place mirror
 * - bare_link_dest_rsync_ms: `rsync -rlptD --link-dest` of the live tree into a fresh directory
 *   against the current revision: what building an immutable hard-linked snapshot costs with no
 *   fleet around it (the floor of the fleet's rsync step)
 * - per_file_copy_ms: copying every file one by one into a mirror (the naive approach)
 *
 * then restores the current revision both ways:
 *
 * - restore_ms: the fleet's restore into a new incarnation (`restoreWorkspace`: staging rsync,
 *   swap-in, ready marker), after the incarnation was created the way provisioning does
 * - bare_restore_rsync_ms: `rsync -a` of the same revision into an empty directory
 *
 * The page cache is flushed (`sync`) before every timed step so no step pays for another's dirty
 * data; a second persist per repeat runs with 130 MB of unrelated dirty data on the filesystem
 * (another tenant writing), which is what a filesystem-wide flush has to wait for.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { walkTree } from '../src/archive/tree-walk.js';
import { restoreWorkspace } from '../src/restore/restore-workspace.js';
import { withBenchEnv } from './lib/bench-env.js';
import { startFleetHarness, type FleetHarness } from './lib/fleet-harness.js';
import { interleave, timed } from './lib/interleave.js';
import { persistProbe, type PersistPhases } from './lib/persist-probe.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { pairedRatios, summarize, type Summary } from './lib/stats.js';
import { changeFiles, planTree, writeTree, type TreeFile } from './lib/workspace-tree.js';
import { scaled } from './lib/scale.js';

const run = promisify(execFile);
const FILES = scaled(10_000, 500);
const TOTAL_BYTES = scaled(130 * 1_000_000, 5_000_000);
const CHANGED = 0.01;
const FOREIGN_DIRTY_BYTES = scaled(130 * 1_000_000, 5_000_000);
const WS = 'bench-persist';

// Flushes dirty data of every filesystem, so the next step starts clean.
const syncAll = () => run('sync');

// One fleet persist with its phase breakdown.
async function fleetPersist(fleet: FleetHarness): Promise<PersistPhases & { changedFiles: number }> {
  const probe = persistProbe(fleet.persistDeps());
  const result = await fleet.persist(WS, { deps: probe.deps, onProgress: probe.onProgress });
  if (result.unchanged) throw new Error('bench: persist found no change');
  return { ...probe.phases(), changedFiles: result.changedFiles };
}

// The fleet's restore of the current revision into a new incarnation; returns ms of the restore itself.
async function fleetRestore(fleet: FleetHarness): Promise<number> {
  const { services, config } = fleet;
  const revision = await services.archive.current(WS);
  const generation = await services.addresses.bumpGeneration(WS);
  const provider = services.providers.get('local');
  const signal = AbortSignal.timeout(10 * 60_000);
  const created = await provider.create({ workspaceId: WS, generation, hostId: config.hostId, source: { type: 'empty' }, signal });
  await syncAll();
  const ms = await timed(() => restoreWorkspace(services, provider, { workspaceId: WS, generation, handle: created.handle, revision, signal }));
  if (!(await services.addresses.publish({ workspaceId: WS, handle: created.handle, generation, hostId: created.hostId, provider: 'local' }))) {
    throw new Error('bench: publishing the restored incarnation failed');
  }
  return ms;
}

// Copies every file one by one (directories exist already).
async function perFileCopy(files: readonly TreeFile[], from: string, to: string): Promise<void> {
  for (const file of files) await copyFile(path.join(from, file.rel), path.join(to, file.rel));
}

// Per-phase summaries of persist runs.
function phaseSummaries(runs: readonly PersistPhases[], prefix: string): Record<string, Summary> {
  const keys = (Object.keys(runs[0]!) as (keyof PersistPhases)[]).filter((k) => k.endsWith('_ms'));
  return Object.fromEntries(keys.map((k) => [`${prefix}${k}`, summarize(runs.map((r) => r[k]), 'ms')]));
}

export default async function persistBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 5;
  return withBenchEnv('persist', async (env) => {
    const fleet = await startFleetHarness(env);
    const mirror = await env.subdir('bare-mirror');
    const naive = await env.subdir('naive-mirror');
    const scratch = await env.subdir('scratch');

    await fleet.provision(WS);
    const files = planTree({ files: FILES, totalBytes: TOTAL_BYTES });
    ctx.log(`writing ${FILES} files / ${(TOTAL_BYTES / 1e6).toFixed(0)} MB`);
    await writeTree(fleet.live(WS), files);
    for (const dir of new Set(files.map((f) => path.dirname(f.rel)))) await mkdir(path.join(naive, dir), { recursive: true });
    await syncAll();
    const initialBare = await timed(() => run('rsync', ['-rlptD', '--delete', `${fleet.live(WS)}/`, `${mirror}/`]));
    await syncAll();
    const initial = await fleetPersist(fleet);
    ctx.log(`initial full persist ${initial.total_ms.toFixed(0)} ms (bare rsync into an empty mirror ${initialBare.toFixed(0)} ms)`);

    const walkOnly: number[] = [];
    const foreign: { persist: PersistPhases[]; bare: number[] } = { persist: [], bare: [] };
    const persistRuns: PersistPhases[] = [];
    const changed: number[] = [];
    const main = { persist_ms: [] as number[], bare_rsync_ms: [] as number[], bare_link_dest_rsync_ms: [] as number[], per_file_copy_ms: [] as number[] };
    const restores = { restore_ms: [] as number[], bare_restore_rsync_ms: [] as number[] };
    for (let repeat = 0; repeat < repeats; repeat++) {
      await syncAll();
      await changeFiles(fleet.live(WS), files, CHANGED, 2 * repeat);
      const one = await interleave(1, {
        persist_ms: async () => {
          await syncAll();
          const phases = await fleetPersist(fleet);
          persistRuns.push(phases);
          changed.push(phases.changedFiles);
          return phases.total_ms;
        },
        bare_rsync_ms: async () => {
          await syncAll();
          return timed(() => run('rsync', ['-rlptD', '--delete', `${fleet.live(WS)}/`, `${mirror}/`]));
        },
        bare_link_dest_rsync_ms: async () => {
          const current = fleet.services.archive.paths(WS).revision((await fleet.services.archive.current(WS))!);
          const dest = path.join(scratch, `snapshot-${repeat}`);
          await syncAll();
          const ms = await timed(() => run('rsync', ['-rlptD', `--link-dest=${current}`, `${fleet.live(WS)}/`, `${dest}/`]));
          await rm(dest, { recursive: true, force: true });
          return ms;
        },
        per_file_copy_ms: async () => {
          await syncAll();
          return timed(() => perFileCopy(files, fleet.live(WS), naive));
        },
      }, undefined, repeat);
      for (const key of Object.keys(main) as (keyof typeof main)[]) main[key].push(one[key][0]!);

      const revision = fleet.services.archive.paths(WS).revision((await fleet.services.archive.current(WS))!);
      walkOnly.push(await timed(async () => {
        for await (const _ of walkTree(revision));
      }));

      // The same kind of turn while another tenant has 130 MB of dirty data on the filesystem.
      await syncAll();
      await changeFiles(fleet.live(WS), files, CHANGED, 2 * repeat + 1);
      const dirty = await interleave(1, {
        persist: async () => {
          await writeFile(path.join(scratch, 'foreign.bin'), randomBytes(FOREIGN_DIRTY_BYTES));
          const phases = await fleetPersist(fleet);
          foreign.persist.push(phases);
          return phases.total_ms;
        },
        bare: async () => {
          await writeFile(path.join(scratch, 'foreign.bin'), randomBytes(FOREIGN_DIRTY_BYTES));
          return timed(() => run('rsync', ['-rlptD', '--delete', `${fleet.live(WS)}/`, `${mirror}/`]));
        },
      }, undefined, repeat);
      foreign.bare.push(dirty.bare[0]!);
      await rm(path.join(scratch, 'foreign.bin'), { force: true });

      const restored = await interleave(1, {
        restore_ms: () => fleetRestore(fleet),
        bare_restore_rsync_ms: async () => {
          // Like the fleet's restore (whose new incarnation replaced a full tree), remove the previous copy first.
          await rm(path.join(scratch, `restore-${repeat - 1}`), { recursive: true, force: true });
          const dest = path.join(scratch, `restore-${repeat}`);
          await mkdir(dest);
          await syncAll();
          return timed(() => run('rsync', ['-a', `${revision}/`, `${dest}/`]));
        },
      }, undefined, repeat);
      restores.restore_ms.push(restored.restore_ms[0]!);
      restores.bare_restore_rsync_ms.push(restored.bare_restore_rsync_ms[0]!);
      ctx.log(
        `repeat ${repeat + 1}: persist ${main.persist_ms[repeat]!.toFixed(0)} / bare rsync ${main.bare_rsync_ms[repeat]!.toFixed(0)} / link-dest ${main.bare_link_dest_rsync_ms[repeat]!.toFixed(0)} / per-file ${main.per_file_copy_ms[repeat]!.toFixed(0)} ms; ` +
          `dirty-fs persist ${dirty.persist[0]!.toFixed(0)} / rsync ${dirty.bare[0]!.toFixed(0)} ms; restore ${restores.restore_ms[repeat]!.toFixed(0)} / bare ${restores.bare_restore_rsync_ms[repeat]!.toFixed(0)} ms`,
      );
    }

    const persistRatio = summarize(pairedRatios(main.persist_ms, main.bare_rsync_ms), 'persist/bare');
    const copyRatio = summarize(pairedRatios(main.per_file_copy_ms, main.persist_ms), 'per-file/persist');
    const restoreRatio = summarize(pairedRatios(restores.restore_ms, restores.bare_restore_rsync_ms), 'restore/bare');
    const dirtyRatio = summarize(pairedRatios(foreign.persist.map((p) => p.total_ms), foreign.bare), 'persist/bare');
    return {
      params: { files: FILES, totalMB: TOTAL_BYTES / 1e6, changedPct: CHANGED * 100, changedFiles: changed[0], repeats, foreignDirtyMB: FOREIGN_DIRTY_BYTES / 1e6 },
      metrics: {
        persist_ms: summarize(main.persist_ms, 'ms'),
        bare_rsync_ms: summarize(main.bare_rsync_ms, 'ms'),
        bare_link_dest_rsync_ms: summarize(main.bare_link_dest_rsync_ms, 'ms'),
        per_file_copy_ms: summarize(main.per_file_copy_ms, 'ms'),
        'persist / bare_rsync': persistRatio,
        'persist / bare_link_dest_rsync': summarize(pairedRatios(main.persist_ms, main.bare_link_dest_rsync_ms), 'persist/link-dest'),
        'per_file_copy / persist': copyRatio,
        restore_ms: summarize(restores.restore_ms, 'ms'),
        bare_restore_rsync_ms: summarize(restores.bare_restore_rsync_ms, 'ms'),
        'restore / bare_restore': restoreRatio,
        dirty_fs_persist_ms: summarize(foreign.persist.map((p) => p.total_ms), 'ms'),
        dirty_fs_bare_rsync_ms: summarize(foreign.bare, 'ms'),
        'dirty_fs persist / bare_rsync': dirtyRatio,
        initial_full_persist_ms: summarize([initial.total_ms], 'ms'),
        initial_bare_rsync_ms: summarize([initialBare], 'ms'),
      },
      profile: {
        ...phaseSummaries(persistRuns, 'persist.'),
        walk_only_ms: summarize(walkOnly, 'ms'),
        ...phaseSummaries(foreign.persist, 'dirty_fs_persist.'),
      },
      targets: [
        target('persist / bare rsync (median of paired ratios)', persistRatio.median, '<=', 2),
        target('persist / bare rsync, stretch', persistRatio.median, '<=', 1.5),
        target('per-file copy / persist (x faster)', copyRatio.median, '>=', 10),
        target('restore / bare rsync -a', restoreRatio.median, '<=', 1.5),
      ],
      notes: [],
    };
  });
}
