/**
 * `dedup`: 100 workspaces start from one base tree (2,000 files / 8 MB, the shape of a baked
 * base), each changes 1 % of its files and persists. Archive format 2 stores every content once
 * per archive root, so the archive should hold about the base plus the changes, not 100 copies:
 * reported as archive bytes / (base bytes + changed bytes), target <= 1.1.
 */
import { execFile } from 'node:child_process';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { withBenchEnv } from './lib/bench-env.js';
import { startFleetHarness } from './lib/fleet-harness.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { scaled } from './lib/scale.js';
import { summarize } from './lib/stats.js';
import { CONTENT_SEED, changeFiles, planTree, writeTree } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';

const run = promisify(execFile);
const WORKSPACES = scaled(100, 10);
const FILES = scaled(2_000, 200);
const BASE_BYTES = FILES * 4_096;
const CHANGED = 0.01;

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

export default async function dedupBench(ctx: BenchContext): Promise<BenchResult> {
  return withBenchEnv('dedup', async (env) => {
    const fleet = await startFleetHarness(env, { FLEET_ARCHIVE_FORMAT: '2' });
    const base = await env.subdir('base');
    const tree = planTree({ files: FILES, totalBytes: BASE_BYTES });
    const content = rng(CONTENT_SEED);
    await writeTree(base, tree, content);
    let changedBytes = 0;
    const persistMs: number[] = [];
    for (let i = 0; i < WORKSPACES; i++) {
      const ws = `dedup-${i}`;
      await fleet.provision(ws);
      await run('cp', ['-a', `${base}/.`, fleet.live(ws)]);
      changedBytes += (await changeFiles(fleet.live(ws), tree, CHANGED, i, content)).reduce((sum, f) => sum + f.size, 0);
      const result = await fleet.persist(ws);
      persistMs.push(result.durationMs);
      if ((i + 1) % Math.max(1, Math.floor(WORKSPACES / 10)) === 0) ctx.log(`${i + 1}/${WORKSPACES} workspaces persisted`);
    }
    const archiveBytes = await bytesUnder(fleet.config.paths.archiveRoot);
    const ratio = archiveBytes / (BASE_BYTES + changedBytes);
    ctx.log(`archive ${archiveBytes} bytes for a ${BASE_BYTES}-byte base and ${changedBytes} changed bytes: ${ratio.toFixed(3)}x`);
    return {
      params: { workspaces: WORKSPACES, filesPerWorkspace: FILES, baseMB: BASE_BYTES / 1e6, changedPct: CHANGED * 100 },
      metrics: {
        archive_bytes: summarize([archiveBytes], 'bytes'),
        base_plus_changes_bytes: summarize([BASE_BYTES + changedBytes], 'bytes'),
        'archive / (base + changes)': summarize([ratio], 'ratio'),
        naive_copies_bytes: summarize([WORKSPACES * BASE_BYTES], 'bytes'),
        first_persist_ms: summarize(persistMs, 'ms'),
      },
      targets: [target('archive / (base + changes)', ratio, '<=', 1.1)],
      notes: ['archive bytes count objects, trees and revision records (apparent sizes); trees and records are the overhead above 1.0'],
    };
  });
}
