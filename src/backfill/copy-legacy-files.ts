/**
 * Copies legacy files into a temporary revision directory. Parents are created as real
 * directories (0755); the plan guarantees no ancestor is a file or symlink. Each file is
 * created exclusively (never over an existing path), streamed from the legacy store, and given
 * the legacy mode and mtime. Nothing here is durable yet: the caller fsyncs and verifies.
 */
import { chmod, lstat, mkdir, open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { absoluteBytes } from '../archive/tree-walk.js';
import type { LegacyFile, LegacyWorkspace } from './legacy-source.js';
import { mapBounded } from '../lib/map-bounded.js';

/** Files copied at once (overlaps small-file open/close latency; bounded for memory). */
const COPY_CONCURRENCY = 8;
/** Files up to this size are read whole (fewer syscalls than a stream); larger ones stream. */
const WHOLE_READ_BYTES = 4 * 1024 * 1024;

// Creates the missing ancestors of `rel` under `root` (each one a real directory).
async function ensureParents(root: string, rel: Buffer, made: Set<string>): Promise<void> {
  for (let at = rel.indexOf(0x2f); at !== -1; at = rel.indexOf(0x2f, at + 1)) {
    const key = rel.subarray(0, at).toString('latin1');
    if (made.has(key)) continue;
    const dir = absoluteBytes(root, rel.subarray(0, at));
    try {
      await mkdir(dir, { mode: 0o755 });
      await chmod(dir, 0o755);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !(await lstat(dir)).isDirectory()) throw error;
    }
    made.add(key);
  }
}

// Copies one file (exclusive create, then mode and mtime): in one read when small, else streamed.
async function copyOne(legacy: LegacyWorkspace, file: LegacyFile, dest: Buffer): Promise<void> {
  const handle = await open(dest, 'wx', 0o600);
  try {
    if (file.size <= WHOLE_READ_BYTES) await handle.writeFile(await legacy.read(file));
    else await pipeline(await legacy.open(file), handle.createWriteStream({ autoClose: false }));
    await handle.chmod(file.mode);
    const mtime = file.mtimeMs / 1000;
    await handle.utimes(mtime, mtime);
  } finally {
    await handle.close();
  }
}

/** Copies `files` (in path order) into `root`; reports each copied file. */
export async function copyLegacyFiles(legacy: LegacyWorkspace, files: readonly LegacyFile[], root: string, signal: AbortSignal, onFile?: (done: number) => void): Promise<void> {
  const made = new Set<string>();
  // Parents first, in path order, so concurrent copies never race on a directory.
  for (const file of files) await ensureParents(root, file.rel, made);
  let done = 0;
  await mapBounded(
    files,
    COPY_CONCURRENCY,
    async (file) => {
      await copyOne(legacy, file, absoluteBytes(root, file.rel));
      onFile?.(++done);
    },
    signal,
  );
}
