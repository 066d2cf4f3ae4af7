// The pieces the hostile-tree walk is built from: names, handles, Node's file-time rule, the
// previous-revision index, the task pool, sparse copies and removal by handles.
import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { appendFile, chmod, lstat, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeManifest, scanTree } from '../../src/archive/manifest.js';
import { indexManifest, keyOf, subtreeSize } from '../../src/archive/prior-index.js';
import { storedMode } from '../../src/archive/stored-mode.js';
import { TaskPool } from '../../src/lib/task-pool.js';
import { copyFileData, isSparse, UNMOVED_CHECK_BYTES } from '../../src/tree/copy-file-data.js';
import { checkName, DirHandle } from '../../src/tree/dir-handle.js';
import { sameMtime, setFileTime, storedMtimeNs } from '../../src/tree/file-times.js';
import { removeTree } from '../../src/tree/remove-tree.js';
import { vanishedTolerance } from '../../src/tree/tree-limits.js';
import { rng } from '../helpers/rng.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fleet-tree-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('DirHandle', () => {
  it('refuses anything but one path component', () => {
    for (const bad of ['', '.', '..', 'a/b', '/a', 'a\0b']) expect(() => checkName(Buffer.from(bad)), JSON.stringify(bad)).toThrow(TypeError);
    for (const good of ['...', '.a', 'a..', '-rf', 'new\nline', '\\']) expect(() => checkName(Buffer.from(good))).not.toThrow();
  });

  it('never opens a symlink as a directory, at the root or beneath it', async () => {
    await mkdir(path.join(dir, 'real'));
    await symlink(path.join(dir, 'real'), path.join(dir, 'link'));
    await expect(DirHandle.open(path.join(dir, 'link'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    const root = await DirHandle.open(dir);
    try {
      await expect(root.openDir(Buffer.from('link'))).rejects.toMatchObject({ code: 'ENOTDIR' });
      const real = await root.openDir(Buffer.from('real'));
      expect(real.stats.ino).toBe((await lstat(path.join(dir, 'real'), { bigint: true })).ino);
      await real.close();
      expect((await root.names()).map(String)).toEqual(['link', 'real']);
    } finally {
      await root.close();
    }
  });

  it('keeps addressing the directory it opened after the path is renamed away', async () => {
    await mkdir(path.join(dir, 'a'));
    const handle = await DirHandle.open(path.join(dir, 'a'));
    await writeFile(path.join(dir, 'a', 'x'), 'x');
    await rename(path.join(dir, 'a'), path.join(dir, 'b'));
    await mkdir(path.join(dir, 'a'));
    await writeFile(path.join(dir, 'a', 'impostor'), '');
    expect((await handle.names()).map(String)).toEqual(['x']);
    await handle.close();
  });

  it('lists at most `max` names and says when there were more', async () => {
    for (let i = 0; i < 10; i++) await writeFile(path.join(dir, `f${i}`), '');
    const handle = await DirHandle.open(dir);
    const names = await handle.names(4);
    await handle.close();
    expect(names).toHaveLength(4);
    expect(names.truncated).toBe(true);
  });
});

describe('file times', () => {
  it('storedMtimeNs is exactly what a file gets when Node sets a nanosecond time', async () => {
    const file = await open(path.join(dir, 't'), 'w');
    try {
      // A fixed seed: the same 700 times every run (a failure names its time).
      const random = rng(7_100);
      for (let i = 0; i < 500; i++) {
        const ns = BigInt(random.int(1, 2e9)) * 1_000_000_000n + BigInt(random.int(0, 1e9 - 1));
        await setFileTime(file, ns);
        expect((await file.stat({ bigint: true })).mtimeNs, String(ns)).toBe(storedMtimeNs(ns));
      }
      // Before 1970: Node would put a negative number of seconds to the current time.
      const before1970 = Array.from({ length: 200 }, () => -(BigInt(random.int(0, 2e9 - 1)) * 1_000_000_000n + BigInt(random.int(0, 1e9 - 1))));
      for (const ns of [-1n, -999n, -1_500_000_000n, -86_400_123_456_789n, ...before1970]) {
        await setFileTime(file, ns);
        expect((await file.stat({ bigint: true })).mtimeNs, String(ns)).toBe(storedMtimeNs(ns));
      }
    } finally {
      await file.close();
    }
  });

  it('sameMtime accepts the stored form of the original only, never the reverse', () => {
    const original = 1_700_000_000_123_456_789n;
    expect(sameMtime(original, original)).toBe(true);
    expect(sameMtime(storedMtimeNs(original), original)).toBe(true);
    expect(sameMtime(original + 1n, original)).toBe(false);
    // Two distinct times one microsecond apart, as Node sets them, stay distinct.
    expect(sameMtime(1_700_000_000_000_001_000n, 1_700_000_000_000_000_000n)).toBe(false);
  });
});

describe('stored modes and tolerances', () => {
  it('drops setuid and setgid, keeps permission and sticky bits', () => {
    expect(storedMode(0o4755)).toBe(0o755);
    expect(storedMode(0o2755)).toBe(0o755);
    expect(storedMode(0o1777)).toBe(0o1777);
    expect(storedMode(0o000)).toBe(0);
  });

  it('the vanished tolerance grows with the tree', () => {
    expect(vanishedTolerance(0)).toBe(64);
    expect(vanishedTolerance(100_000)).toBe(564);
  });
});

describe('indexManifest / subtreeSize', () => {
  it('indexes entries by directory (raw bytes) and counts subtrees', async () => {
    await mkdir(path.join(dir, 'a', 'b'), { recursive: true });
    await writeFile(path.join(dir, 'a', 'b', 'c'), 'c');
    await writeFile(path.join(dir, 'a', 'd'), 'd');
    await writeFile(Buffer.from(`${dir}/bad-\xff`, 'latin1'), 'x');
    const manifest = makeManifest({ workspaceId: 'w', revision: 'r', generation: 1, reason: 'manual', turnId: null, parent: null, mode: 'reconcile', createdAt: '' }, await scanTree(dir, null));
    const index = indexManifest(manifest);
    expect([...index.get('')!.keys()].sort()).toEqual(['a', keyOf(Buffer.from('bad-\xff', 'latin1'))].sort());
    expect([...index.get('a')!.keys()].sort()).toEqual(['b', 'd']);
    expect(subtreeSize(index, 'a')).toBe(3);
    expect(subtreeSize(index, '')).toBe(5);
    expect(subtreeSize(index, 'missing')).toBe(0);
  });
});

describe('TaskPool', () => {
  it('bounds concurrency, keeps the first failure and still settles the rest', async () => {
    const pool = new TaskPool(2);
    let running = 0;
    let peak = 0;
    const group: Promise<void>[] = [];
    const work = (fail: boolean) => async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      if (fail) throw new Error('first');
    };
    await pool.schedule(group, work(true));
    await pool.schedule(group, work(false));
    await expect(pool.schedule(group, work(false))).rejects.toThrow('first');
    await pool.settle();
    expect(peak).toBe(2);
    expect(group).toHaveLength(2);
    await expect(pool.drain()).rejects.toThrow('first');
  });
});

describe('copyFileData', () => {
  it('keeps holes of a sparse file and hashes its logical content', async () => {
    const from = path.join(dir, 'sparse');
    await writeFile(from, Buffer.from('head'));
    await truncate(from, 64 * 1024 * 1024);
    const tail = rng(7_101).bytes(10);
    const fh = await open(from, 'r+');
    await fh.write(tail, 0, tail.length, 32 * 1024 * 1024);
    await fh.close();
    const source = await open(from, 'r');
    const out = await open(path.join(dir, 'copy'), 'w');
    const sourceStats = await source.stat({ bigint: true });
    expect(isSparse(sourceStats)).toBe(true);
    const copied = await copyFileData(source, out, Number(sourceStats.size), true);
    await source.close();
    await out.close();
    const copy = await stat(path.join(dir, 'copy'));
    expect(copy.size).toBe(64 * 1024 * 1024);
    expect(copy.blocks * 512).toBeLessThan(1024 * 1024);
    const expected = createHash('sha256').update(await readFile(from)).digest('hex');
    expect(copied).toEqual({ hash: expected, bytes: 64 * 1024 * 1024 });
  });

  // A source that grew at the first check: the copy stops there, and says so.
  it('with an unmoved check: asked every UNMOVED_CHECK_BYTES and at the end; a source that moved stops the copy at that check', async () => {
    const from = path.join(dir, 'large');
    const content = rng(7_102).bytes(5 * UNMOVED_CHECK_BYTES);
    await writeFile(from, content);
    const copyWith = async (unmoved: (source: FileHandle, before: BigIntStats) => Promise<boolean>) => {
      const source = await open(from, 'r');
      const out = await open(path.join(dir, 'copy'), 'w');
      try {
        const before = await source.stat({ bigint: true });
        return await copyFileData(source, out, Number(before.size), false, undefined, () => unmoved(source, before));
      } finally {
        await source.close();
        await out.close();
      }
    };
    let checks = 0;
    const steady = await copyWith(async () => {
      checks += 1;
      return true;
    });
    expect(steady).toEqual({ hash: createHash('sha256').update(content).digest('hex'), bytes: content.length });
    // At 4, 8, 12 and 16 of the 20 MiB, then once the copy is whole.
    expect(checks).toBe(5);
    checks = 0;
    const moved = await copyWith(async (source, before) => {
      checks += 1;
      await appendFile(from, 'x');
      return (await source.stat({ bigint: true })).size === before.size;
    });
    expect(moved).toEqual({ hash: '', bytes: UNMOVED_CHECK_BYTES, moved: true });
    expect(checks).toBe(1);
    expect((await stat(path.join(dir, 'copy'))).size).toBe(UNMOVED_CHECK_BYTES);
  });
});

describe('removeTree', () => {
  it('removes a tree with hostile shapes without following links out of it', async () => {
    const outside = path.join(dir, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'keep'), 'keep');
    const tree = path.join(dir, 'tree');
    await mkdir(path.join(tree, 'a', 'b'), { recursive: true });
    await symlink(outside, path.join(tree, 'link'));
    await symlink(outside, path.join(tree, 'a', 'link'));
    await writeFile(path.join(tree, 'a', 'b', 'f'), 'f');
    await utimes(path.join(tree, 'a'), 0, 0);
    await chmod(path.join(tree, 'a', 'b'), 0o000);
    await removeTree(tree);
    expect(await readdir(dir)).toEqual(['outside']);
    expect(await readdir(outside)).toEqual(['keep']);
    await removeTree(tree);
  });
});
