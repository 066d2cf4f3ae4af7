/** Makes sure `dist/` (what `bin/fleet.js` runs) is at least as new as `src/`. */
import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// Newest mtime of the files below `dir` (0 when missing).
async function newest(dir: string): Promise<number> {
  let latest = 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    latest = Math.max(latest, (await stat(path.join(entry.parentPath, entry.name))).mtimeMs);
  }
  return latest;
}

/** Rebuilds with `tsc -p tsconfig.build.json` when a source file is newer than the build. */
export async function ensureBuilt(log: (line: string) => void): Promise<void> {
  const built = await stat(path.join(ROOT, 'dist', '.tsbuildinfo')).then((s) => s.mtimeMs, () => 0);
  if ((await newest(path.join(ROOT, 'src'))) <= built) return;
  log('dist/ is older than src/: building (tsc -p tsconfig.build.json)');
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT });
}

/**
 * Imports a module of the built fleet (`dist/<relative>`), typed as its source: what `fleet`
 * processes run, without the loader's per-function additions that `tsx` makes to `src/` modules
 * (esbuild `keepNames` wraps every closure a job creates in a `__name` call).
 */
export async function importBuilt<T>(relative: string): Promise<T> {
  return (await import(path.join(ROOT, 'dist', relative))) as T;
}
