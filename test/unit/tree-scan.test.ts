// walkTree / scanTree: the concurrent lstat and background hashing keep the exact entries and
// order of a plain serial walk, reuse hashes of hard-linked files, and fail cleanly.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { link, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeManifest, scanTree } from '../../src/archive/manifest.js';
import { absoluteBytes, walkTree } from '../../src/archive/tree-walk.js';
import { removeTree } from '../../src/tree/remove-tree.js';
import { HOSTILE_FIXTURE } from '../helpers/hostile-tree.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fleet-scan-'));
});
afterEach(async () => {
  // By handles: Node's fs.rm cannot remove a tree deeper than PATH_MAX.
  await removeTree(root);
});

// The reference: a serial walk in bytewise name order.
async function referenceWalk(dir: string, rel: Buffer = Buffer.alloc(0)): Promise<{ rel: string; type: string; size: number; ino: number; target?: string }[]> {
  const out: { rel: string; type: string; size: number; ino: number; target?: string }[] = [];
  const names = (await readdir(absoluteBytes(dir, rel), { encoding: 'buffer' })).sort(Buffer.compare);
  for (const name of names) {
    const child = rel.length === 0 ? name : Buffer.concat([rel, Buffer.from('/'), name]);
    const stats = await lstat(absoluteBytes(dir, child));
    const type = stats.isFile() ? 'file' : stats.isDirectory() ? 'dir' : stats.isSymbolicLink() ? 'symlink' : stats.isFIFO() ? 'fifo' : 'other';
    out.push({ rel: child.toString('hex'), type, size: type === 'file' ? stats.size : 0, ino: stats.ino, ...(type === 'symlink' ? { target: (await readlink(absoluteBytes(dir, child), { encoding: 'buffer' })).toString('hex') } : {}) });
  }
  // A directory's entries come first, then each subdirectory's, in name order (the original serial walk).
  const result = [...out];
  for (const entry of out) if (entry.type === 'dir') result.push(...(await referenceWalk(dir, Buffer.from(entry.rel, 'hex'))));
  return result;
}

// A tree with many siblings (more than the lstat concurrency), nesting, odd names, links and a FIFO.
async function buildTree(dir: string): Promise<void> {
  for (let d = 0; d < 3; d++) {
    await mkdir(path.join(dir, `dir-${d}`, 'nested', 'deeper'), { recursive: true });
    for (let f = 0; f < 40; f++) await writeFile(path.join(dir, `dir-${d}`, `f-${String(f).padStart(2, '0')}.txt`), `content ${d}/${f}\n`.repeat(f));
    await writeFile(path.join(dir, `dir-${d}`, 'nested', 'deeper', 'leaf'), `leaf ${d}`);
  }
  await writeFile(absoluteBytes(dir, Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe])), 'invalid utf-8 name');
  await writeFile(path.join(dir, '-leading-dash'), 'x');
  await writeFile(path.join(dir, 'new\nline'), 'y');
  await symlink('../../outside', path.join(dir, 'dir-0', 'escape'));
  await symlink('dir-1', path.join(dir, 'to-dir'));
  execFileSync('mkfifo', [path.join(dir, 'pipe')]);
}

describe('walkTree', () => {
  it('walks a tree deeper than PATH_MAX (2,100 levels) by handles, without ENAMETOOLONG', async () => {
    execFileSync('python3', [HOSTILE_FIXTURE, 'deep', root, '2100']);
    let dirs = 0;
    let deepest = 0;
    for await (const e of walkTree(root)) {
      if (e.type === 'dir') dirs += 1;
      deepest = Math.max(deepest, e.rel.length);
      if (e.type === 'file') expect(e.rel.toString()).toBe(`${'d/'.repeat(2100)}leaf.txt`);
    }
    expect(dirs).toBe(2100);
    expect(deepest).toBeGreaterThan(4096);
    const scan = await scanTree(root, null);
    expect(scan.files).toBe(1);
  });

  it('yields exactly what a serial walk yields, in the same order', async () => {
    await buildTree(root);
    const walked = [];
    for await (const e of walkTree(`${root}/`)) walked.push({ rel: e.rel.toString('hex'), type: e.type, size: e.size, ino: e.ino, ...(e.target ? { target: e.target.toString('hex') } : {}) });
    expect(walked).toEqual(await referenceWalk(root));
    expect(walked.length).toBeGreaterThan(130);
  });

  it('a directory removed mid-walk fails the walk, or is skipped with skipVanished', async () => {
    for (const skipVanished of [false, true]) {
      await rm(root, { recursive: true, force: true });
      await mkdir(path.join(root, 'a'), { recursive: true });
      await mkdir(path.join(root, 'b', 'inner'), { recursive: true });
      await writeFile(path.join(root, 'a', 'x'), 'x');
      await writeFile(path.join(root, 'b', 'inner', 'y'), 'y');
      const seen: string[] = [];
      const walk = async () => {
        for await (const e of walkTree(root, { skipVanished })) {
          seen.push(e.rel.toString());
          // The root's entries are described before any subdirectory is read: remove b now.
          if (seen.length === 1) await rm(path.join(root, 'b'), { recursive: true });
        }
      };
      if (skipVanished) {
        await walk();
        expect(seen).toEqual(['a', 'b', 'a/x']);
      } else {
        await expect(walk()).rejects.toMatchObject({ code: 'ENOENT' });
      }
    }
  });
});

describe('scanTree', () => {
  it('hashes every file like a direct sha256 and keeps the walk order', async () => {
    await buildTree(root);
    const scan = await scanTree(root, null);
    const order = (await referenceWalk(root)).map((e) => e.rel);
    expect(scan.entries.map((e) => Buffer.from(e.p.startsWith('b64:') ? Buffer.from(e.p.slice(4), 'base64') : Buffer.from(e.p)).toString('hex'))).toEqual(order);
    for (const entry of scan.entries.filter((e) => e.t === 'f')) {
      const bytes = await readFile(absoluteBytes(root, e2b(entry.p)));
      expect(entry.h).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
    expect(scan.copiedFiles).toBe(scan.files);
  });

  it('reuses the hashes of files hard-linked to the previous revision', async () => {
    const previousRoot = path.join(root, 'prev');
    const nextRoot = path.join(root, 'next');
    await mkdir(previousRoot);
    await buildTree(previousRoot);
    const previous = makeManifest(
      { workspaceId: 'ws', revision: 'r', generation: 1, reason: 'manual', turnId: null, parent: null, mode: 'reconcile', createdAt: new Date(0).toISOString() },
      await scanTree(previousRoot, null),
    );
    execFileSync('cp', ['-al', previousRoot, nextRoot]);
    await rm(path.join(nextRoot, 'dir-1', 'f-07.txt'));
    await writeFile(path.join(nextRoot, 'dir-1', 'f-07.txt'), 'rewritten');
    await link(path.join(nextRoot, 'dir-2', 'f-01.txt'), path.join(nextRoot, 'dir-2', 'linked-elsewhere'));
    const scan = await scanTree(nextRoot, previous);
    expect(scan.copiedFiles).toBe(2);
    expect(scan.entries.find((e) => e.p === 'dir-1/f-07.txt')!.h).toBe(createHash('sha256').update('rewritten').digest('hex'));
    expect(scan.entries.filter((e) => e.t === 'f').every((e) => typeof e.h === 'string' && e.h.length === 64)).toBe(true);
  });

  it('rejects with the abort reason and leaves no stray rejection behind', async () => {
    await buildTree(root);
    const controller = new AbortController();
    const reason = new Error('deadline');
    const scanning = scanTree(root, null, controller.signal, (n) => {
      if (n === 5) controller.abort(reason);
    });
    await expect(scanning).rejects.toBe(reason);
  });
});

// Decodes a manifest path (UTF-8 or b64:) to bytes.
function e2b(p: string): Buffer {
  return p.startsWith('b64:') ? Buffer.from(p.slice(4), 'base64') : Buffer.from(p, 'utf8');
}
