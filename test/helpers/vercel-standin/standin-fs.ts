// The stand-in's disk: each sandbox's `/` is a host directory; uploads are real gzip tars, and
// snapshots are real copies.
import { spawn } from 'node:child_process';
import { mkdir, readdir, lstat } from 'node:fs/promises';
import path from 'node:path';
import { ApiFailure } from './standin-http.js';

/** The host path of sandbox path `sandboxPath` (resolved against `cwd`), never outside `root`. */
export function hostPath(root: string, sandboxPath: string, cwd = '/'): string {
  return path.join(root, path.posix.resolve('/', cwd, sandboxPath));
}

// Runs a host tool, feeding `input`; rejects with its stderr on failure.
function run(cmd: string, args: string[], input?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: [input ? 'pipe' : 'ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}: ${stderr.trim()}`))));
    if (input) child.stdin!.end(input);
  });
}

/** Unpacks a gzip tar (as the SDK's `writeFiles` sends it) into `dir`, creating parents. */
export async function extractUpload(body: Buffer, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  try {
    await run('tar', ['-xzpf', '-', '--no-same-owner', '-C', dir], body);
  } catch (error) {
    throw new ApiFailure(400, 'bad_request', `Cannot extract the upload: ${(error as Error).message}`);
  }
}

/** Copies the contents of `from` into `to` (symlinks, modes and times kept). */
export async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  await run('cp', ['-a', `${from}/.`, to]);
}

/** Total size of the regular files under `dir`. */
export async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    const full = path.join(dir, name);
    const stat = await lstat(full);
    if (stat.isDirectory()) total += await treeSize(full);
    else if (stat.isFile()) total += stat.size;
  }
  return total;
}
