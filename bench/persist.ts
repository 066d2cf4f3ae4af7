/**
 * `persist` (and restore): a generated workspace (10,000 files / 130 MB by default; `--files
 * 10000,100000` measures each size in turn, ~4 KB files at 100,000 like a node_modules tree); each
 * repeat rewrites 1 % of the files (one agent turn) and measures, interleaved in rotating order:
 *
 * - persist_ms: the fleet's turn-end reconcile (`persistWorkspace` on a provisioned local
 *   workspace, archive format 2: walk, quick check, store changed objects and trees, syncfs,
 *   record, attach, flip)
 * - bare_rsync_ms: `rsync -rlptD --delete` of the same change into a plain in-place mirror
 * - bare_link_dest_rsync_ms: `rsync -rlptD --link-dest` of the live tree into a fresh directory
 *   against the mirror: what building an immutable hard-linked snapshot costs with no fleet
 *
 * and, per turn, what the revision added to the archive (bytes and filesystem entries, against the
 * bytes the turn changed). Then:
 *
 * - initial_full_persist_ms vs initial_rsync_a_ms: the first revision of the whole tree vs
 *   `rsync -a` into an empty directory, for `FIRST_PERSISTS` workspaces of their own content:
 *   this one's first (the process's first persist, reported apart: V8 compiles the walk while it
 *   runs), the others' after the turns and restores (a worker that has been at work, and the
 *   turns and restores beside one workspace's state, as before); initial_rsync_a_sync_ms adds
 *   the `sync -f` that makes rsync's copy
 *   durable, as the persist's commit makes its revision (context; the target is against `rsync -a`)
 * - restore_ms vs cp_a_ms: the fleet's restore of the current revision into a new incarnation
 *   (`restoreWorkspace`) vs `cp -a` of the same tree into an empty directory
 *
 * The page cache is flushed (`sync`) before every timed step so no step pays for another's dirty data.
 */
import { execFile } from 'node:child_process';
import { lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { restoreWorkspace } from '../src/restore/restore-workspace.js';
import { withBenchEnv } from './lib/bench-env.js';
import { bySize, type SizeResult } from './lib/by-size.js';
import { startFleetHarness, type FleetHarness } from './lib/fleet-harness.js';
import { interleave, timed } from './lib/interleave.js';
import { persistProbe, type PersistPhases } from './lib/persist-probe.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { scaled } from './lib/scale.js';
import { pairedRatios, summarize, type Summary } from './lib/stats.js';
import { CONTENT_SEED, changeFiles, planTree, writeTree } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';

const run = promisify(execFile);
const CHANGED = 0.01;
const WS = 'bench-persist';

// Flushes dirty data of every filesystem, so the next step starts clean.
const syncAll = () => run('sync');

// Bytes (apparent) and entries of everything under `dir`.
async function footprint(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      entries += 1;
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else bytes += (await lstat(full)).size;
    }
  };
  await walk(dir);
  return { bytes, entries };
}

/** First full persists measured at each size, each of a new workspace with content of its own. */
const FIRST_PERSISTS = 3;

// One fleet persist with its phase breakdown.
async function fleetPersist(fleet: FleetHarness, workspaceId = WS): Promise<PersistPhases & { changedFiles: number; reusedDirectories: number }> {
  const probe = persistProbe(fleet.persistDeps());
  const result = await fleet.persist(workspaceId, { deps: probe.deps, onProgress: probe.onProgress });
  if (result.unchanged) throw new Error('bench: persist found no change');
  return { ...probe.phases(), changedFiles: result.changedFiles, reusedDirectories: result.reusedDirectories ?? 0 };
}

// The fleet's restore of the current revision into a new incarnation; returns ms of the restore itself.
async function fleetRestore(fleet: FleetHarness): Promise<number> {
  const { services, config } = fleet;
  const revision = await services.archive.current(WS);
  const generation = await services.addresses.bumpGeneration(WS);
  const provider = services.providers.get('local');
  const signal = AbortSignal.timeout(30 * 60_000);
  const created = await provider.create({ workspaceId: WS, generation, hostId: config.hostId, source: { type: 'empty' }, signal });
  await syncAll();
  const ms = await timed(() => restoreWorkspace(services, provider, { workspaceId: WS, generation, handle: created.handle, revision, signal }));
  if (!(await services.addresses.publish({ workspaceId: WS, handle: created.handle, generation, hostId: created.hostId, provider: 'local' }))) {
    throw new Error('bench: publishing the restored incarnation failed');
  }
  return ms;
}

// Per-phase summaries of persist runs.
function phaseSummaries(runs: readonly PersistPhases[], prefix: string): Record<string, Summary> {
  const keys = (Object.keys(runs[0]!) as (keyof PersistPhases)[]).filter((k) => k.endsWith('_ms'));
  return Object.fromEntries(keys.map((k) => [`${prefix}${k}`, summarize(runs.map((r) => r[k]), 'ms')]));
}

// The whole measurement at one workspace size.
async function measure(ctx: BenchContext, files: number, repeats: number, label: string): Promise<SizeResult> {
  // ~13 KB files (a source tree) at 10,000 and below; ~4 KB files (a node_modules tree) above.
  const totalBytes = files <= 10_000 ? scaled(130 * 1_000_000, 5_000_000) * (files / scaled(10_000, 500)) : files * 4_096;
  return withBenchEnv(`persist-${files}`, async (env) => {
    // FLEET_PERSIST_CHANGE_SCAN=false in the bench's environment measures the persist that walks every directory (the figure before the change scan).
    // FLEET_ARCHIVE_TREE_PATCHES=false: every tree stored whole (the figure before tree patches).
    const fleet = await startFleetHarness(env, {
      FLEET_ARCHIVE_FORMAT: '2',
      FLEET_PERSIST_CHANGE_SCAN: process.env.FLEET_PERSIST_CHANGE_SCAN ?? 'true',
      FLEET_ARCHIVE_TREE_PATCHES: process.env.FLEET_ARCHIVE_TREE_PATCHES ?? 'true',
      // FLEET_ARCHIVE_PACKS=false: every small object a file of its own (the figure before packs).
      FLEET_ARCHIVE_PACKS: process.env.FLEET_ARCHIVE_PACKS ?? 'true',
    });
    const mirror = await env.subdir('bare-mirror');
    const scratch = await env.subdir('scratch');
    const archiveRoot = fleet.config.paths.archiveRoot;
    await fleet.provision(WS);
    const tree = planTree({ files, totalBytes });
    ctx.log(`${label}writing ${files} files / ${(totalBytes / 1e6).toFixed(0)} MB`);
    const content = rng(CONTENT_SEED + files);
    await writeTree(fleet.live(WS), tree, content);
    // First full persists: this workspace's now (the process's first); new workspaces' of their
    // own content after the turns and restores (so those run beside one workspace's state, as before).
    const firsts: { persist: PersistPhases; rsyncA: number; syncF: number }[] = [];
    const firstPersist = async (k: number) => {
      const ws = k === 0 ? WS : `${WS}-first-${k}`;
      const into = k === 0 ? mirror : await env.subdir(`first-mirror-${k}`);
      if (k > 0) {
        await fleet.provision(ws);
        await writeTree(fleet.live(ws), tree, rng(CONTENT_SEED + files + 1_000 * k));
      }
      await syncAll();
      const rsyncA = await timed(() => run('rsync', ['-a', `${fleet.live(ws)}/`, `${into}/`]));
      const syncF = await timed(() => run('sync', ['-f', into]));
      await syncAll();
      const persist = await fleetPersist(fleet, ws);
      firsts.push({ persist, rsyncA, syncF });
      ctx.log(`${label}first full persist ${k + 1}/${FIRST_PERSISTS} ${persist.total_ms.toFixed(0)} ms (rsync -a into an empty directory ${rsyncA.toFixed(0)} ms, then sync -f ${syncF.toFixed(0)} ms); walk ${persist.build_ms.toFixed(0)} ms, durability ${persist.durability_ms.toFixed(0)} ms, prepare ${persist.prepare_ms.toFixed(0)} ms, checks ${persist.check_ms.toFixed(0)} ms`);
      if (k > 0) await rm(into, { recursive: true, force: true });
    };
    await firstPersist(0);

    const persistRuns: PersistPhases[] = [];
    const changed: number[] = [];
    const reused: number[] = [];
    let clusteredReused = 0;
    const growth = { bytes: [] as number[], entries: [] as number[], changedBytes: [] as number[] };
    const main = { persist_ms: [] as number[], bare_rsync_ms: [] as number[], bare_link_dest_rsync_ms: [] as number[] };
    const restores = { restore_ms: [] as number[], cp_a_ms: [] as number[] };
    for (let repeat = 0; repeat < repeats; repeat++) {
      await syncAll();
      const turn = await changeFiles(fleet.live(WS), tree, CHANGED, 2 * repeat, content);
      growth.changedBytes.push(turn.reduce((sum, f) => sum + f.size, 0));
      const before = await footprint(archiveRoot);
      const one = await interleave(1, {
        persist_ms: async () => {
          await syncAll();
          const phases = await fleetPersist(fleet);
          persistRuns.push(phases);
          changed.push(phases.changedFiles);
          reused.push(phases.reusedDirectories);
          return phases.total_ms;
        },
        bare_rsync_ms: async () => {
          await syncAll();
          return timed(() => run('rsync', ['-rlptD', '--delete', `${fleet.live(WS)}/`, `${mirror}/`]));
        },
        bare_link_dest_rsync_ms: async () => {
          const dest = path.join(scratch, `snapshot-${repeat}`);
          await syncAll();
          const ms = await timed(() => run('rsync', ['-rlptD', `--link-dest=${mirror}`, `${fleet.live(WS)}/`, `${dest}/`]));
          await rm(dest, { recursive: true, force: true });
          return ms;
        },
      }, undefined, repeat);
      for (const key of Object.keys(main) as (keyof typeof main)[]) main[key].push(one[key][0]!);
      const after = await footprint(archiveRoot);
      growth.bytes.push(after.bytes - before.bytes);
      growth.entries.push(after.entries - before.entries);
      ctx.log(
        `${label}turn ${repeat + 1}: persist ${main.persist_ms[repeat]!.toFixed(0)} / bare rsync ${main.bare_rsync_ms[repeat]!.toFixed(0)} / link-dest ${main.bare_link_dest_rsync_ms[repeat]!.toFixed(0)} ms ` +
          `(${reused[repeat]} directories taken by id); archive +${growth.bytes[repeat]} bytes, +${growth.entries[repeat]} entries for ${growth.changedBytes[repeat]} changed bytes`,
      );
    }
    // Turns back to back, as an agent's turn-end persists come: each change made right before its
    // persist, the next change right after (the turns above have a second or more between them).
    // A change lies before its persist's line (change-stamp.ts): the next persist does not look at it again.
    const backToBack = { back_to_back_persist_ms: [] as number[], back_to_back_bare_rsync_ms: [] as number[] };
    const backReused: number[] = [];
    for (let repeat = 0; repeat < repeats; repeat++) {
      await changeFiles(fleet.live(WS), tree, CHANGED, 2 * repeats + 1 + 2 * repeat, content);
      await syncAll();
      const phases = await fleetPersist(fleet);
      backToBack.back_to_back_persist_ms.push(phases.total_ms);
      backReused.push(phases.reusedDirectories);
      await syncAll();
      backToBack.back_to_back_bare_rsync_ms.push(await timed(() => run('rsync', ['-rlptD', '--delete', `${fleet.live(WS)}/`, `${mirror}/`])));
      ctx.log(`${label}back-to-back turn ${repeat + 1}: persist ${backToBack.back_to_back_persist_ms[repeat]!.toFixed(0)} / bare rsync ${backToBack.back_to_back_bare_rsync_ms[repeat]!.toFixed(0)} ms (${backReused[repeat]} directories taken by id)`);
    }
    // An agent's usual turn: a few files of one directory (the random 1 % above touches most directories).
    const leaves = [...new Set(tree.map((f) => path.posix.dirname(f.rel)))];
    const changeLeaf = async (leaf: string) => {
      const files = tree.filter((f) => path.posix.dirname(f.rel) === leaf).slice(0, 10);
      for (const f of files) await writeFile(path.join(fleet.live(WS), f.rel), content.bytes(f.size));
      return files;
    };
    const clusteredFiles = await changeLeaf(leaves[leaves.length - 1]!);
    const clustered = await interleave(1, {
      clustered_persist_ms: async () => {
        await syncAll();
        const phases = await fleetPersist(fleet);
        clusteredReused = phases.reusedDirectories;
        return phases.total_ms;
      },
      clustered_bare_rsync_ms: async () => {
        await syncAll();
        return timed(() => run('rsync', ['-rlptD', '--delete', `${fleet.live(WS)}/`, `${mirror}/`]));
      },
    });
    ctx.log(`${label}clustered turn (${clusteredFiles.length} files of one directory): persist ${clustered.clustered_persist_ms[0]!.toFixed(0)} / bare rsync ${clustered.clustered_bare_rsync_ms[0]!.toFixed(0)} ms (${clusteredReused} directories taken by id)`);
    // Restores after the turns: a restore swaps in a new live tree, and the turns are the persists of one live tree, turn after turn.
    for (let repeat = 0; repeat < repeats; repeat++) {
      const restored = await interleave(1, {
        restore_ms: () => fleetRestore(fleet),
        cp_a_ms: async () => {
          // Like the fleet's restore (whose new incarnation replaced a full tree), remove the previous copy first.
          await rm(path.join(scratch, `restore-${repeat - 1}`), { recursive: true, force: true });
          const dest = path.join(scratch, `restore-${repeat}`);
          await syncAll();
          return timed(() => run('cp', ['-a', `${mirror}/.`, dest]));
        },
      }, undefined, repeat);
      restores.restore_ms.push(restored.restore_ms[0]!);
      restores.cp_a_ms.push(restored.cp_a_ms[0]!);
      ctx.log(`${label}restore ${repeat + 1}: ${restores.restore_ms[repeat]!.toFixed(0)} / cp -a ${restores.cp_a_ms[repeat]!.toFixed(0)} ms`);
    }

    for (let k = 1; k < FIRST_PERSISTS; k++) await firstPersist(k);

    const persistRatio = summarize(pairedRatios(main.persist_ms, main.bare_rsync_ms), 'persist/bare');
    const restoreRatio = summarize(pairedRatios(restores.restore_ms, restores.cp_a_ms), 'restore/cp -a');
    const bytesRatio = summarize(pairedRatios(growth.bytes, growth.changedBytes), 'added/changed bytes');
    const firstMs = firsts.map((f) => f.persist.total_ms);
    const initialRatio = summarize(pairedRatios(firstMs, firsts.map((f) => f.rsyncA)), 'persist/rsync -a');
    const changedPaths = Math.max(1, Math.round(files * CHANGED));
    return {
      params: { files, totalMB: totalBytes / 1e6, changedPct: CHANGED * 100, changedFiles: changed[0], repeats, changeScan: fleet.config.changeScan, treePatches: fleet.config.treePatches },
      metrics: {
        persist_ms: summarize(main.persist_ms, 'ms'),
        bare_rsync_ms: summarize(main.bare_rsync_ms, 'ms'),
        bare_link_dest_rsync_ms: summarize(main.bare_link_dest_rsync_ms, 'ms'),
        'persist / bare_rsync': persistRatio,
        'persist / bare_link_dest_rsync': summarize(pairedRatios(main.persist_ms, main.bare_link_dest_rsync_ms), 'persist/link-dest'),
        initial_full_persist_ms: summarize(firstMs, 'ms'),
        initial_rsync_a_ms: summarize(firsts.map((f) => f.rsyncA), 'ms'),
        initial_rsync_a_sync_ms: summarize(firsts.map((f) => f.rsyncA + f.syncF), 'ms'),
        'initial persist / rsync -a': initialRatio,
        'initial persist / (rsync -a + sync -f)': summarize(pairedRatios(firstMs, firsts.map((f) => f.rsyncA + f.syncF)), 'persist/(rsync -a + sync -f)'),
        'first persist of a fresh process / rsync -a': summarize([firsts[0]!.persist.total_ms / firsts[0]!.rsyncA], 'persist/rsync -a'),
        restore_ms: summarize(restores.restore_ms, 'ms'),
        cp_a_ms: summarize(restores.cp_a_ms, 'ms'),
        'restore / cp -a': restoreRatio,
        archive_bytes_added_per_revision: summarize(growth.bytes, 'bytes'),
        changed_bytes_per_turn: summarize(growth.changedBytes, 'bytes'),
        'archive bytes added / changed bytes': bytesRatio,
        archive_entries_added_per_revision: summarize(growth.entries, 'entries'),
        directories_taken_by_id_per_turn: summarize(reused, 'directories'),
        back_to_back_persist_ms: summarize(backToBack.back_to_back_persist_ms, 'ms'),
        back_to_back_bare_rsync_ms: summarize(backToBack.back_to_back_bare_rsync_ms, 'ms'),
        'back-to-back persist / bare_rsync': summarize(pairedRatios(backToBack.back_to_back_persist_ms, backToBack.back_to_back_bare_rsync_ms), 'persist/bare'),
        directories_taken_by_id_back_to_back: summarize(backReused, 'directories'),
        clustered_persist_ms: summarize(clustered.clustered_persist_ms, 'ms'),
        clustered_bare_rsync_ms: summarize(clustered.clustered_bare_rsync_ms, 'ms'),
        'clustered persist / bare_rsync': summarize(pairedRatios(clustered.clustered_persist_ms, clustered.clustered_bare_rsync_ms), 'persist/bare'),
      },
      profile: { ...phaseSummaries(persistRuns, 'persist.'), ...phaseSummaries(firsts.map((f) => f.persist), 'initial_persist.') },
      targets: [
        target(`${label}persist / bare in-place rsync`, persistRatio.median, '<=', 1),
        target(`${label}first full persist / rsync -a (median of ${FIRST_PERSISTS} workspaces)`, initialRatio.median, '<=', 1.2),
        target(`${label}restore / cp -a`, restoreRatio.median, '<=', 1),
        target(`${label}archive bytes added per revision / changed bytes`, bytesRatio.median, '<=', 2),
        // O(changed paths): an object per changed file and a tree per directory on its path.
        target(`${label}archive entries added per revision / changed paths`, summarize(growth.entries, 'entries').median / changedPaths, '<=', 8),
      ],
    };
  });
}

export default async function persistBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 5;
  return bySize(10_000, 500, { repeats, changedPct: CHANGED * 100 }, (files, label) => measure(ctx, files, repeats, label));
}
