/**
 * Generated workspace trees: a fixed number of files with a realistic, skewed size mix (many
 * small sources, a few large assets; log-normal sizes scaled to an exact total), spread over a
 * two-level directory layout, and deterministic "turns" that rewrite a fraction of the files.
 * Content comes from a seeded stream the caller owns: one stream per run writes every file new
 * (incompressible, never deduplicated by chance), and the same run writes the same bytes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { rng, type Rng } from '../../test/helpers/rng.js';

/** The seed of the benchmarks' content streams (fixed: a run writes the same bytes every time). */
export const CONTENT_SEED = 4_242;

export interface TreeFile {
  /** Path relative to the tree root. */
  readonly rel: string;
  readonly size: number;
}

export interface TreeSpec {
  readonly files: number;
  readonly totalBytes: number;
  /** Leaf directories the files are spread over. @default files / 50 */
  readonly dirs?: number;
  readonly seed?: number;
}

// Log-normal sizes (median 4 KiB, sigma 1.6), scaled to `total` bytes, each at least 1 byte.
function sizesFor(count: number, total: number, random: () => number): number[] {
  const raw = Array.from({ length: count }, () => {
    const gaussian = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return Math.min(4 * 2 ** 20, 4096 * Math.exp(1.6 * gaussian));
  });
  const scale = total / raw.reduce((a, b) => a + b, 0);
  const sizes = raw.map((s) => Math.max(1, Math.round(s * scale)));
  sizes[0]! += total - sizes.reduce((a, b) => a + b, 0);
  return sizes;
}

/** The file list of a spec (no I/O). */
export function planTree({ files, totalBytes, dirs = Math.max(1, Math.round(files / 50)), seed = 42 }: TreeSpec): TreeFile[] {
  const sizes = sizesFor(files, totalBytes, rng(seed));
  const fanout = Math.ceil(Math.sqrt(dirs));
  return sizes.map((size, i) => {
    const leaf = i % dirs;
    return { rel: path.posix.join(`pkg-${Math.floor(leaf / fanout)}`, `mod-${leaf % fanout}`, `file-${i}.dat`), size };
  });
}

/** Writes a planned tree under `root`, its content drawn from `content`. */
export async function writeTree(root: string, files: readonly TreeFile[], content: Rng): Promise<void> {
  const made = new Set<string>();
  for (const file of files) {
    const dir = path.dirname(path.join(root, file.rel));
    if (!made.has(dir)) {
      await mkdir(dir, { recursive: true });
      made.add(dir);
    }
    await writeFile(path.join(root, file.rel), content.bytes(file.size));
  }
}

/** Rewrites `fraction` of the files (the turn picks which) in place with new content of the same size from `content`. */
export async function changeFiles(root: string, files: readonly TreeFile[], fraction: number, turn: number, content: Rng): Promise<TreeFile[]> {
  const random = rng(1_000 + turn);
  const count = Math.max(1, Math.round(files.length * fraction));
  const chosen = new Map<number, TreeFile>();
  while (chosen.size < count) {
    const i = Math.floor(random() * files.length);
    chosen.set(i, files[i]!);
  }
  for (const file of chosen.values()) await writeFile(path.join(root, file.rel), content.bytes(file.size));
  return [...chosen.values()];
}
