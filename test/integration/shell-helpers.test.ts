// The long-lived shells that run `sync -f` and the change scan's `find` (src/lib/shell-helpers.ts):
// answers framed right whatever the file names, one call per helper at a time, a call's deadline,
// abort or stop killing its helper's whole group, a helper that died unseen replaced, and no
// helper outliving its process however that process ends. Real `sh`, `sync` and `find`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rename, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCAN_EXPRESSION, scanChangedDirs } from '../../src/archive/changed-dirs.js';
import { DurabilityError, syncFilesystem } from '../../src/archive/fsync.js';
import { processAlive } from '../../src/lib/process-alive.js';
import { HelperCallFailed, MAX_HELPERS, ShellHelpers, shellHelpers } from '../../src/lib/shell-helpers.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { ROOT } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const SYSTEM_PATH = '/usr/bin:/bin';
const USER = path.join(ROOT, 'test/fixtures/shell-helper-user.mjs');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'shell-helpers-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// `find`'s own records for the tree at `root`, changed after `since`, and its other directories (what a helper's scan must give, byte for byte).
function findRecords(root: string, since: string): Buffer {
  const result = spawnSync('find', ['-H', root, ...SCAN_EXPRESSION(since)], { env: { PATH: SYSTEM_PATH, LC_ALL: 'C' } });
  expect(result.status).toBe(0);
  return result.stdout;
}

// A PATH whose `sync` is `script` (and whose `sh` is the system's).
async function fakeSyncPath(script: string): Promise<string> {
  const bin = await mkdtemp(path.join(dir, 'bin-'));
  await symlink('/bin/sh', path.join(bin, 'sh'));
  await writeFile(path.join(bin, 'sync'), `#!/bin/sh\n${script}\n`);
  await chmod(path.join(bin, 'sync'), 0o755);
  return `${bin}:${SYSTEM_PATH}`;
}

describe('shell helpers', () => {
  it('sync: many calls at once all answer, on at most MAX_HELPERS shells, which stay for the next calls', async () => {
    const pool = new ShellHelpers(SYSTEM_PATH);
    const answers = await Promise.all(Array.from({ length: 12 }, () => pool.call(['sync', dir], { timeoutMs: 60_000 })));
    expect(answers).toEqual(Array.from({ length: 12 }, () => ({ status: 0, said: '' })));
    expect(pool.running).toBeLessThanOrEqual(MAX_HELPERS);
    expect(pool.running).toBeGreaterThan(0);
    const idle = pool.idlePids();
    expect(idle.length).toBe(pool.running);
    await pool.call(['sync', dir], { timeoutMs: 60_000 });
    expect(pool.idlePids().sort()).toEqual(idle.sort());
  });

  it('sync: a failure is an answer naming the directory; syncFilesystem throws it as a DurabilityError', async () => {
    const missing = path.join(dir, 'no such dir');
    const answer = await new ShellHelpers(SYSTEM_PATH).call(['sync', missing], { timeoutMs: 60_000 });
    expect(answer.status).not.toBe(0);
    expect(answer.said).toContain('no such dir');
    const error = await syncFilesystem(missing, SYSTEM_PATH, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DurabilityError);
    expect((error as DurabilityError).message).toContain(missing);
    expect((error as DurabilityError).context).toMatchObject({ dir: missing, exitCode: answer.status });
  });

  it('sync: a directory a request line cannot carry (a line break, a tab) is synced by a process of its own', async () => {
    const odd = path.join(dir, 'line\nbreak\tand tab');
    await mkdir(odd);
    await expect(syncFilesystem(odd, SYSTEM_PATH, new AbortController().signal)).resolves.toBeUndefined();
    await expect(new ShellHelpers(SYSTEM_PATH).call(['sync', odd], { timeoutMs: 1_000 })).rejects.toThrow(RangeError);
    const error = await syncFilesystem(`${odd}-missing`, SYSTEM_PATH, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DurabilityError);
  });

  it('scan: the records are find\'s own, byte for byte, across many chunks and hostile names', async () => {
    const tree = await mkdtemp(path.join(dir, 'tree-'));
    const since = `@${Math.floor(Date.now() / 1000) - 60}`;
    // Names with line breaks, tabs, backslashes, control bytes, a lone space and long runs, so records straddle chunk ends.
    const names = ['a\nb', 'tab\there', 'back\\slash', '\x01\x02\x1f', ' ', '%y %P', '-newerct', 'x'.repeat(250)];
    for (let d = 0; d < 40; d++) {
      const sub = path.join(tree, `d${d}-${'n'.repeat(200)}`);
      await mkdir(sub);
      await Promise.all(Array.from({ length: 30 }, (_, i) => writeFile(path.join(sub, `${names[i % names.length]}-${i}`), String(i))));
    }
    await mkdir(path.join(tree, 'empty\ndir'));
    const expected = findRecords(tree, since);
    expect(expected.length).toBeGreaterThan(256 * 1024);
    const chunks: Buffer[] = [];
    const answer = await new ShellHelpers(SYSTEM_PATH).call(['scan', tree, since], { timeoutMs: 60_000, onStdout: (chunk) => void chunks.push(Buffer.from(chunk)) });
    expect(answer).toEqual({ status: 0, said: '' });
    expect(chunks.length).toBeGreaterThan(1);
    expect(Buffer.concat(chunks).equals(expected)).toBe(true);
    // Nothing changed after now: only the directories, each as unchanged, then the same helper answers again.
    const none: Buffer[] = [];
    const later = `@${Math.floor(Date.now() / 1000) + 3600}`;
    await expect(new ShellHelpers(SYSTEM_PATH).call(['scan', tree, later], { timeoutMs: 60_000, onStdout: (chunk) => void none.push(chunk) })).resolves.toEqual({ status: 0, said: '' });
    const records = Buffer.concat(none).toString('latin1').split('\0').slice(0, -1);
    expect(records).toHaveLength(42);
    expect(records.every((record) => record.startsWith('u '))).toBe(true);
    expect(Buffer.concat(none).equals(findRecords(tree, later))).toBe(true);
  });

  it('scan: a root that is not absolute, or a time find would not take, is refused before any helper runs', async () => {
    const pool = new ShellHelpers(SYSTEM_PATH);
    await expect(pool.call(['scan', '-delete', '@0'], { timeoutMs: 1_000 })).rejects.toThrow(/absolute root.*"-delete"/);
    await expect(pool.call(['scan', dir, '-exec'], { timeoutMs: 1_000 })).rejects.toThrow(/"-exec"/);
    expect(pool.running).toBe(0);
  });

  it('scan: a vanished start point is a non-zero status with what find said', async () => {
    const answer = await new ShellHelpers(SYSTEM_PATH).call(['scan', path.join(dir, 'gone'), '@0'], { timeoutMs: 60_000 });
    expect(answer.status).not.toBe(0);
    expect(answer.said).toContain('gone');
  });

  it('the change scan reads the directory this process holds, even once its path names another', async () => {
    const held = await mkdtemp(path.join(dir, 'held-'));
    const other = await mkdtemp(path.join(dir, 'other-'));
    const since = BigInt(Date.now() - 60_000) * 1_000_000n;
    await mkdir(path.join(held, 'changed-here'));
    await mkdir(path.join(other, 'elsewhere'));
    const root = await DirHandle.open(held);
    try {
      // The tree's path is swapped for a symlink to another tree after its root was opened.
      await rename(held, `${held}-moved`);
      await symlink(other, held);
      const changed = await scanChangedDirs(root, { sinceNs: since, maxRecords: 1_000, systemPath: SYSTEM_PATH, signal: new AbortController().signal });
      expect(changed).not.toBeNull();
      expect(changed!.changedEntry(Buffer.from('changed-here'))).toBe(true);
      expect(changed!.changedEntry(Buffer.from('elsewhere'))).toBe(false);
      // It ran in a helper (the pool has one, idle, after it).
      expect(shellHelpers(SYSTEM_PATH).idlePids().length).toBeGreaterThan(0);
    } finally {
      root.closeSync();
    }
  });

  it('a deadline kills the helper\'s whole group, the command with it; the next call gets a new helper', async () => {
    const pidFile = path.join(dir, 'slow-sync.pid');
    const systemPath = await fakeSyncPath(`echo $$ > '${pidFile}'\nexec sleep 600`);
    const pool = new ShellHelpers(systemPath);
    const error = await pool.call(['sync', dir], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HelperCallFailed);
    expect((error as HelperCallFailed).reason).toBe('timeout');
    const sleeper = Number(await readFile(pidFile, 'utf8'));
    await waitFor('the timed-out sync to be killed', () => !processAlive(sleeper));
    expect(pool.running).toBe(0);
    const plain = new ShellHelpers(SYSTEM_PATH);
    await expect(plain.call(['sync', dir], { timeoutMs: 60_000 })).resolves.toEqual({ status: 0, said: '' });
  });

  it('an abort kills the helper too, and syncFilesystem throws it as a DurabilityError', async () => {
    const started = path.join(dir, 'abort-sync.pid');
    const systemPath = await fakeSyncPath(`echo $$ > '${started}'\nexec sleep 600`);
    const controller = new AbortController();
    const pending = syncFilesystem(dir, systemPath, controller.signal).catch((e: unknown) => e);
    const sleeper = await waitFor('the sync to start', async () => Number(await readFile(started, 'utf8').catch(() => '')) || undefined);
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(DurabilityError);
    expect((error as Error).message).toContain('aborted');
    await waitFor('the aborted sync to be killed', () => !processAlive(sleeper));
  });

  it('a caller that stops reading kills the scan; the call rejects as stopped', async () => {
    const tree = await mkdtemp(path.join(dir, 'stop-'));
    await Promise.all(Array.from({ length: 2_000 }, (_, i) => writeFile(path.join(tree, `f${i}`), '')));
    const pool = new ShellHelpers(SYSTEM_PATH);
    let chunks = 0;
    const error = await pool.call(['scan', tree, '@0'], { timeoutMs: 60_000, onStdout: () => (chunks += 1) < 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HelperCallFailed);
    expect((error as HelperCallFailed).reason).toBe('stopped');
    expect(chunks).toBe(1);
    expect(pool.running).toBe(0);
  });

  it('an idle helper killed from outside is replaced: the next call still answers', async () => {
    const pool = new ShellHelpers(SYSTEM_PATH, 1);
    await pool.call(['sync', dir], { timeoutMs: 60_000 });
    const [pid] = pool.idlePids();
    process.kill(pid!, 'SIGKILL');
    await waitFor('the helper to be gone', () => !processAlive(pid!));
    await expect(pool.call(['sync', dir], { timeoutMs: 60_000 })).resolves.toEqual({ status: 0, said: '' });
    expect(pool.idlePids()).toHaveLength(1);
    expect(pool.idlePids()[0]).not.toBe(pid);
  });

  it.each(['exit', 'hold'])('no helper outlives its process (%s)', async (mode) => {
    const child = spawn(process.execPath, [USER, mode, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const line = await waitFor('the helper pid', () => /helper (\d+)\n/.exec(out) ?? undefined);
    const helper = Number(line[1]);
    expect(processAlive(helper)).toBe(true);
    if (mode === 'hold') child.kill('SIGKILL');
    // An idle helper keeps nothing alive: the process ends on its own when it has nothing left to do.
    expect(await exited).toBe(mode === 'exit' ? 0 : null);
    await waitFor('the helper to exit with its process', () => !processAlive(helper));
  });
});
