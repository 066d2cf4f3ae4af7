// The change scan when its shell helper cannot scan (a worker its children cannot read through
// /proc/<pid>/fd, say): each such scan is made again by a `find` of its own, given the root's
// descriptor, and gives the same answer; after three misses in a row the worker stops asking its
// helpers. A `find` on PATH that refuses any root but /proc/self/fd/... stands in for the failure.
// A scan over its deadline is not made again. (The module counts misses: the tests run in order.)
import { appendFile, chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { scanChangedDirs } from '../../src/archive/changed-dirs.js';
import { DirHandle } from '../../src/tree/dir-handle.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'scan-fallback-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('a helper scan over its deadline is not made again: the persist walks everything', async () => {
  const bin = path.join(dir, 'slow-bin');
  const log = path.join(dir, 'slow-find.log');
  await mkdir(bin);
  await writeFile(path.join(bin, 'find'), `#!/bin/sh\necho "$2" >> '${log}'\nexec sleep 600\n`);
  await chmod(path.join(bin, 'find'), 0o755);
  const tree = await mkdtemp(path.join(dir, 'slow-tree-'));
  const root = await DirHandle.open(tree);
  try {
    const changed = await scanChangedDirs(root, { sinceNs: 0n, maxRecords: 1_000, systemPath: `${bin}:/usr/bin:/bin`, signal: new AbortController().signal, deadlineMs: 300 });
    expect(changed).toBeNull();
  } finally {
    root.closeSync();
  }
  const calls = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  expect(calls).toHaveLength(1);
  expect(calls[0]).toMatch(new RegExp(`^/proc/${process.pid}/fd/\\d+$`));
});

it('a helper scan that fails is made again by a find of its own; after three misses the helpers are not asked', async () => {
  const bin = path.join(dir, 'bin');
  const log = path.join(dir, 'find.log');
  await mkdir(bin);
  await writeFile(path.join(bin, 'find'), `#!/bin/sh\necho "$2" >> '${log}'\ncase "$2" in /proc/self/fd/*) exec /usr/bin/find "$@" ;; esac\necho "find: refused $2" >&2\nexit 1\n`);
  await chmod(path.join(bin, 'find'), 0o755);
  const tree = path.join(dir, 'tree');
  await mkdir(path.join(tree, 'a', 'b'), { recursive: true });
  await writeFile(path.join(tree, 'a', 'b', 'new'), 'x');
  const root = await DirHandle.open(tree);
  try {
    const scan = () => scanChangedDirs(root, { sinceNs: BigInt(Date.now() - 60_000) * 1_000_000n, maxRecords: 1_000, systemPath: `${bin}:/usr/bin:/bin`, signal: new AbortController().signal });
    for (let round = 1; round <= 4; round++) {
      await appendFile(log, `round ${round}\n`);
      const changed = await scan();
      expect(changed, `round ${round}`).not.toBeNull();
      expect(changed!.changedEntry(Buffer.from('a/b/new'))).toBe(true);
      expect(changed!.reusable(Buffer.from('a'))).toBe(false);
    }
  } finally {
    root.closeSync();
  }
  const rounds = (await readFile(log, 'utf8')).split(/round \d\n/).slice(1).map((calls) => calls.split('\n').filter(Boolean));
  const helper = new RegExp(`^/proc/${process.pid}/fd/\\d+$`);
  const own = /^\/proc\/self\/fd\/3$/;
  for (const calls of rounds.slice(0, 3)) {
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatch(helper);
    expect(calls[1]).toMatch(own);
  }
  expect(rounds[3]).toHaveLength(1);
  expect(rounds[3]![0]).toMatch(own);
});

