// What an AI agent's code can do to its own tree, and the checks that nothing it did reached
// outside: canary bytes never archived, outside directories unchanged, other workspaces intact.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, link, lstat, mkdir, readFile, readdir, readlink, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { addCleanup } from './cleanup.js';

export const HOSTILE_FIXTURE = fileURLToPath(new URL('../fixtures/hostile-tree.py', import.meta.url));

/** Raw-byte names a shell or a path join gets wrong. */
export const HOSTILE_NAMES: readonly Buffer[] = [
  Buffer.from('new\nline'),
  Buffer.from('back\\slash'),
  Buffer.from('-rf'),
  Buffer.from('--help'),
  Buffer.concat([Buffer.from('bad-'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('.txt')]),
  Buffer.from('n'.repeat(255)),
  Buffer.from(' leading and trailing space '),
  Buffer.from('b64:looks-encoded'),
];

const at = (root: string, rel: Buffer | string) => (typeof rel === 'string' ? path.join(root, rel) : Buffer.concat([Buffer.from(`${root}/`), rel]));

/** True when the process may create device nodes (root outside a user namespace). */
export function canMknod(dir: string): boolean {
  try {
    execFileSync('mknod', [path.join(dir, '.probe-dev'), 'c', '1', '3'], { stdio: 'ignore' });
    execFileSync('rm', ['-f', path.join(dir, '.probe-dev')]);
    return true;
  } catch {
    return false;
  }
}

export interface PlantedTree {
  /** Relative paths (strings) of regular files whose bytes the archive must hold. */
  readonly files: Record<string, string>;
  readonly sparse: string;
  readonly sparseBytes: number;
  readonly hardLinks: readonly [string, string];
  readonly setuid: string;
  readonly device: boolean;
}

/**
 * Plants every static hostile shape into `root`: symlinks out of the tree (absolute, relative,
 * to `outside` and to `victimPaths`), symlink loops, a FIFO, a socket, a device (when allowed),
 * hostile names, mode 000 entries, a setuid file, a sparse file, hard links.
 */
export async function plantHostileTree(root: string, outside: string, victimPaths: readonly string[]): Promise<PlantedTree> {
  const files: Record<string, string> = { 'normal.txt': 'ok', 'dir/inner.txt': 'inner' };
  await mkdir(path.join(root, 'dir'), { recursive: true });
  for (const [rel, content] of Object.entries(files)) await writeFile(path.join(root, rel), content);
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'abs-link'));
  await symlink(`${'../'.repeat(12)}${outside.slice(1)}/secret.txt`, path.join(root, 'rel-escape'));
  await symlink(outside, path.join(root, 'dir-link'));
  await symlink('loop-b', path.join(root, 'loop-a'));
  await symlink('loop-a', path.join(root, 'loop-b'));
  await symlink('self', path.join(root, 'self'));
  for (const [i, victim] of victimPaths.entries()) {
    await symlink(victim, path.join(root, `victim-abs-${i}`));
    await symlink(path.relative(path.join(root, 'dir'), victim), path.join(root, 'dir', `victim-rel-${i}`));
  }
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
  execFileSync('python3', [HOSTILE_FIXTURE, 'socket', path.join(root, 'sock')]);
  const device = canMknod(root);
  if (device) execFileSync('mknod', [path.join(root, 'null-device'), 'c', '1', '3']);
  for (const name of HOSTILE_NAMES) await writeFile(at(root, name), `named ${name.toString('hex')}`);
  await mkdir(path.join(root, '-dir with \n newline'));
  await writeFile(path.join(root, '-dir with \n newline', '-x'), 'x');
  files['-dir with \n newline/-x'] = 'x';
  await writeFile(path.join(root, 'mode000.txt'), 'locked');
  await chmod(path.join(root, 'mode000.txt'), 0o000);
  files['mode000.txt'] = 'locked';
  await mkdir(path.join(root, 'locked-dir'));
  await writeFile(path.join(root, 'locked-dir', 'inside.txt'), 'inside');
  files['locked-dir/inside.txt'] = 'inside';
  await chmod(path.join(root, 'locked-dir'), 0o000);
  await writeFile(path.join(root, 'setuid.sh'), '#!/bin/sh\nid\n');
  await chmod(path.join(root, 'setuid.sh'), 0o4755);
  const sparseBytes = 64 * 1024 ** 2;
  await writeFile(path.join(root, 'sparse.bin'), 'head');
  await truncate(path.join(root, 'sparse.bin'), sparseBytes);
  await writeFile(path.join(root, 'linked-a.txt'), 'one inode');
  await link(path.join(root, 'linked-a.txt'), path.join(root, 'dir', 'linked-b.txt'));
  files['linked-a.txt'] = 'one inode';
  files['dir/linked-b.txt'] = 'one inode';
  return { files, sparse: 'sparse.bin', sparseBytes, hardLinks: ['linked-a.txt', 'dir/linked-b.txt'], setuid: 'setuid.sh', device };
}

/**
 * Lstat facts and content digests of everything under `dir`, as one comparable string. With
 * `links: false` the link count and ctime are left out: a committed revision's files gain links
 * (and a new ctime) when a later revision hard-links them, and nothing else may change.
 */
export async function treeFacts(dir: string, { links = true }: { links?: boolean } = {}): Promise<string> {
  const lines: string[] = [];
  async function walk(rel: Buffer): Promise<void> {
    const full = rel.length === 0 ? Buffer.from(dir) : at(dir, rel);
    const stats = await lstat(full);
    let content = '';
    if (stats.isFile()) content = createHash('sha256').update(await readFile(full)).digest('hex');
    if (stats.isSymbolicLink()) content = (await readlink(full, { encoding: 'buffer' })).toString('hex');
    const linkFacts = links ? ` ${stats.nlink} ${stats.ctimeMs}` : '';
    lines.push(`${rel.toString('hex')} ${stats.mode} ${stats.size} ${stats.ino} ${stats.mtimeMs}${linkFacts} ${content}`);
    if (stats.isDirectory()) {
      for (const name of (await readdir(full, { encoding: 'buffer' })).sort(Buffer.compare)) await walk(rel.length === 0 ? name : Buffer.concat([rel, Buffer.from('/'), name]));
    }
  }
  await walk(Buffer.alloc(0));
  return lines.join('\n');
}

/** True when any regular file under `dir` contains `needle`. */
export function treeContains(dir: string, needle: string): boolean {
  const out = execFileSync('grep', ['-rlF', '--no-messages', '--', needle, dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  return out.length > 0;
}

/** `treeContains` that treats grep's "no match" exit (1) as false. */
export function archiveHolds(dir: string, needle: string): boolean {
  try {
    return treeContains(dir, needle);
  } catch (error) {
    if ((error as { status?: number }).status === 1) return false;
    throw error;
  }
}

export interface Swapper {
  /** Stops the loop and waits for the process to exit. */
  stop(): Promise<void>;
}

/**
 * Starts a tight loop that exchanges `a` and `b` (renameat2 RENAME_EXCHANGE), resolved once the
 * first exchange happened.
 */
export async function startSwapper(a: string, b: string): Promise<Swapper> {
  const child: ChildProcess = spawn('python3', [HOSTILE_FIXTURE, 'swap', a, b], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  addCleanup(stop);
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    lines.once('line', () => resolve());
    child.once('exit', (code) => reject(new Error(`swapper exited early (${code})`)));
  });
  return { stop };
}
