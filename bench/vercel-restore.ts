/**
 * `vercel-restore`: the host's side of a Vercel restore, which packs the revision into the
 * gzip'd tar the sandbox unpacks. Side by side on one format 2 revision (10,000 files / ~1 KB each
 * by default, the loss-window shape; `--files 10000,100000`), alternating:
 *
 * - streamed_pack_ms: packed straight from the revision's trees and objects (pack-revision.ts);
 * - materialized_pack_ms: the path before, materialised into a temporary directory and packed by
 *   the host's `tar` (and the directory removed again).
 *
 * Both archives are unpacked once by GNU tar and compared entry by entry, so a faster pack that
 * restores something else fails the benchmark.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { materializeRevision } from '../src/archive/materialize-revision.js';
import { ObjectStore } from '../src/archive/object-store.js';
import { StoreBuilder } from '../src/archive/store-builder.js';
import { packRevisionObjects } from '../src/providers/vercel/pack-revision.js';
import { packTree } from '../src/providers/vercel/pack-tree.js';
import { DirHandle } from '../src/tree/dir-handle.js';
import { removeTree } from '../src/tree/remove-tree.js';
import { UNLIMITED_TREE } from '../src/tree/tree-limits.js';
import { withBenchEnv } from './lib/bench-env.js';
import { bySize, type SizeResult } from './lib/by-size.js';
import { interleave, timed } from './lib/interleave.js';
import { target, type BenchContext, type BenchResult } from './lib/report.js';
import { pairedRatios, summarize } from './lib/stats.js';
import { CONTENT_SEED, planTree, writeTree } from './lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';

const run = promisify(execFile);
const SYSTEM_PATH = process.env.PATH ?? '/usr/bin:/bin';
const BYTES_PER_FILE = 1_024;
const signal = () => AbortSignal.timeout(30 * 60_000);

// Unpacks `archive` with GNU tar as the sandbox does and lists every entry with its mode, size and mtime.
async function unpackedListing(dir: string, archive: Buffer): Promise<string> {
  const file = `${dir}.tgz`;
  await writeFile(file, archive);
  await mkdir(dir);
  await run('tar', ['-xzpf', file, '--no-same-owner', '-C', dir]);
  const { stdout } = await run('find', ['.', '-mindepth', '1', '-printf', '%P %y %m %s %T@ %l\n'], { cwd: dir, maxBuffer: 1024 ** 3 });
  // Directory times are the time of the restore on both paths: left out.
  return stdout
    .split('\n')
    .map((line) => (line.split(' ')[1] === 'd' ? line.split(' ').slice(0, 3).join(' ') : line))
    .sort()
    .join('\n');
}

async function measure(ctx: BenchContext, files: number, repeats: number, label: string): Promise<SizeResult> {
  return withBenchEnv('vercel-restore', async (env) => {
    const source = await env.subdir('source');
    ctx.log(`${label}writing ${files} files`);
    await writeTree(source, planTree({ files, totalBytes: files * BYTES_PER_FILE }), rng(CONTENT_SEED + files));
    const store = new ObjectStore(await env.subdir('archive'));
    const src = await DirHandle.open(source);
    const tree = await new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: signal() })
      .build(src)
      .finally(() => src.close());
    const scratch = await env.subdir('scratch');
    const bytes: { streamed: number[]; materialized: number[] } = { streamed: [], materialized: [] };
    const archives: Partial<Record<'streamed' | 'materialized', Buffer>> = {};

    const runs = await interleave(
      repeats,
      {
        streamed: () =>
          timed(async () => {
            const archive = await packRevisionObjects(store, tree, { maxBytes: 1024 ** 3 }, signal());
            if (!archive) throw new Error('vercel-restore: the generated tree was not packable from objects');
            bytes.streamed.push(archive.length);
            archives.streamed = archive;
          }),
        materialized: () =>
          timed(async () => {
            const dir = await mkdtemp(path.join(scratch, 'import-'));
            try {
              const dest = await DirHandle.open(dir);
              await materializeRevision(store, tree, dest, { systemPath: SYSTEM_PATH, signal: signal() }).finally(() => dest.close());
              const archive = await packTree(dir, signal(), SYSTEM_PATH);
              bytes.materialized.push(archive.length);
              archives.materialized = archive;
            } finally {
              await removeTree(dir);
            }
          }),
      },
      (variant, repeat, ms) => ctx.log(`${label}repeat ${repeat + 1}: ${variant} ${ms.toFixed(0)} ms`),
    );
    const [a, b] = await Promise.all([unpackedListing(path.join(scratch, 'check-streamed'), archives.streamed!), unpackedListing(path.join(scratch, 'check-materialized'), archives.materialized!)]);
    if (a !== b) throw new Error('vercel-restore: the streamed archive unpacks into another tree than the materialised one');
    await rm(path.join(scratch, 'check-streamed'), { recursive: true, force: true });
    const ratio = summarize(pairedRatios(runs.streamed, runs.materialized), 'streamed/materialized');
    return {
      params: { files, bytesPerFile: BYTES_PER_FILE, repeats },
      metrics: {
        streamed_pack_ms: summarize(runs.streamed, 'ms'),
        materialized_pack_ms: summarize(runs.materialized, 'ms'),
        'streamed / materialized': ratio,
        streamed_archive_bytes: summarize(bytes.streamed, 'bytes'),
        materialized_archive_bytes: summarize(bytes.materialized, 'bytes'),
      },
      profile: {},
      targets: [target(`${label}streamed pack / materialised pack`, ratio.median, '<=', 1)],
      notes: ['both archives are unpacked by GNU tar and compared entry by entry (type, mode, size, file mtime, symlink target) before the figures are reported'],
    };
  });
}

export default async function vercelRestoreBench(ctx: BenchContext): Promise<BenchResult> {
  const repeats = ctx.repeats ?? 5;
  return bySize(10_000, 500, { repeats }, (files, label) => measure(ctx, files, repeats, label));
}
