/**
 * `dedup`: 100 workspaces start from one base tree (2,000 files / 8 MB, the shape of a baked
 * base), each changes 1 % of its files and persists once. Archive format 2 stores every content
 * once per archive root, so the archive should hold about the base plus the changes, not 100
 * copies: reported as archive bytes / (base bytes + changed bytes), target <= 1.1.
 *
 * Two ways side by side, each in an archive of its own:
 * - `from-base` (the product's way, and the target): the base is baked (`bakeBase`, local, its
 *   setup copying the tree in), so the bake archives it (`.bases/`); each workspace is provisioned
 *   from the active base and its first persist compares with the base's trees;
 * - `copied`: each workspace is provisioned empty and the tree copied in, so its first persist
 *   has nothing to compare with (every file read, every directory it changed stored whole).
 */
import { execFile } from 'node:child_process';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { bakeBase } from '../src/bake/bake-base.js';
import { bakeDeps } from '../src/app/build-processors.js';
import { BakePayload } from '../src/queues/bake.js';
import { withBenchEnv, type BenchEnv } from './lib/bench-env.js';
import { startFleetHarness } from './lib/fleet-harness.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { scaled } from './lib/scale.js';
import { summarize } from './lib/stats.js';
import { CONTENT_SEED, changeFiles, planTree, writeTree, type TreeFile } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';

const run = promisify(execFile);
const WORKSPACES = scaled(100, 10);
const FILES = scaled(2_000, 200);
const BASE_BYTES = FILES * 4_096;
const CHANGED = 0.01;

type Mode = 'from-base' | 'copied';

// Apparent bytes of every regular file under `dir`.
async function bytesUnder(dir: string): Promise<number> {
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) bytes += await bytesUnder(full);
    else if (entry.isFile()) bytes += (await lstat(full)).size;
  }
  return bytes;
}

interface ModeResult {
  readonly archiveBytes: number;
  readonly baseBytes: number;
  readonly changedBytes: number;
  readonly ratio: number;
  readonly persistMs: number[];
  readonly changedFiles: number[];
}

async function runMode(env: BenchEnv, ctx: BenchContext, mode: Mode, base: string, tree: readonly TreeFile[]): Promise<ModeResult> {
  await env.flush();
  // The bake's setup runs on the host (no sandbox namespaces) so that it can copy the tree in.
  const fleet = await startFleetHarness(env, { FLEET_ARCHIVE_FORMAT: '2', FLEET_HOME: path.join(env.dir, `home-${mode}`), FLEET_LOCAL_ISOLATION: 'none' });
  const content = rng(CONTENT_SEED + 1);
  // The base's own bytes (from-base: as the bake archived them, its marker file included).
  let baseBytes = BASE_BYTES;
  if (mode === 'from-base') {
    const payload = BakePayload.parse({ manifest: { schemaVersion: 1, name: 'dedup', runtime: 'node22', setup: [`cp -a ${base}/. .`] }, activate: true });
    const baked = await bakeBase(bakeDeps(fleet.services), payload, fleet.ctx());
    const record = await fleet.services.archive.bases.read(baked.snapshotId);
    if (!record) throw new Error('dedup: the bake did not archive its base');
    baseBytes = record.bytes;
  }
  const archiveRoot = fleet.config.paths.archiveRoot;
  let changedBytes = 0;
  const persistMs: number[] = [];
  const changedFiles: number[] = [];
  for (let i = 0; i < WORKSPACES; i++) {
    const ws = `dedup-${i}`;
    const provisioned = await fleet.provision(ws);
    if (mode === 'from-base' && provisioned.outcome !== 'created-from-base') throw new Error(`dedup: ${ws} was ${provisioned.outcome}`);
    if (mode === 'copied') await run('cp', ['-a', `${base}/.`, fleet.live(ws)]);
    changedBytes += (await changeFiles(fleet.live(ws), tree, CHANGED, i, content)).reduce((sum, f) => sum + f.size, 0);
    const result = await fleet.persist(ws);
    persistMs.push(result.durationMs);
    changedFiles.push(result.changedFiles);
    if ((i + 1) % Math.max(1, Math.floor(WORKSPACES / 5)) === 0) ctx.log(`${mode}: ${i + 1}/${WORKSPACES} workspaces persisted`);
  }
  const archiveBytes = await bytesUnder(archiveRoot);
  const ratio = archiveBytes / (baseBytes + changedBytes);
  ctx.log(`${mode}: archive ${archiveBytes} bytes for a ${baseBytes}-byte base and ${changedBytes} changed bytes: ${ratio.toFixed(3)}x`);
  return { archiveBytes, baseBytes, changedBytes, ratio, persistMs, changedFiles };
}

export default async function dedupBench(ctx: BenchContext): Promise<BenchResult> {
  return withBenchEnv('dedup', async (env) => {
    const base = await env.subdir('base');
    const tree = planTree({ files: FILES, totalBytes: BASE_BYTES });
    await writeTree(base, tree, rng(CONTENT_SEED));
    const fromBase = await runMode(env, ctx, 'from-base', base, tree);
    const copied = await runMode(env, ctx, 'copied', base, tree);
    return {
      params: { workspaces: WORKSPACES, filesPerWorkspace: FILES, baseMB: BASE_BYTES / 1e6, changedPct: CHANGED * 100 },
      metrics: {
        'from base: archive / (base + changes)': summarize([fromBase.ratio], 'ratio'),
        'copied: archive / (base + changes)': summarize([copied.ratio], 'ratio'),
        'from base: archive_bytes': summarize([fromBase.archiveBytes], 'bytes'),
        'copied: archive_bytes': summarize([copied.archiveBytes], 'bytes'),
        base_plus_changes_bytes: summarize([fromBase.baseBytes + fromBase.changedBytes], 'bytes'),
        naive_copies_bytes: summarize([WORKSPACES * BASE_BYTES], 'bytes'),
        'from base: first_persist_ms': summarize(fromBase.persistMs, 'ms'),
        'copied: first_persist_ms': summarize(copied.persistMs, 'ms'),
        'from base: first persist changedFiles': summarize(fromBase.changedFiles, 'count'),
        'copied: first persist changedFiles': summarize(copied.changedFiles, 'count'),
      },
      targets: [target('from base: archive / (base + changes)', fromBase.ratio, '<=', 1.1)],
      notes: [
        'archive bytes count objects, trees, revision and base records (apparent sizes); trees and records are the overhead above 1.0',
        'from base: baked with bakeBase (local), so the base is archived and each first persist compares with it; copied: the tree copied into an empty workspace, nothing to compare with',
      ],
    };
  });
}
