// Persists that take unchanged directories from the previous revision by id (a `find` over the
// tree's ctimes says which directories hold a change): over seeded rounds of the changes an agent
// makes (same-size rewrites with the mtime put back, chmods, renames of files and directories, a
// directory swapped for a symlink, hard links, FIFOs, deletions, new files deep down), every
// committed root equals what a full walk of the live tree finds, and the untouched directories
// were not walked. With the scan off every directory is walked.
import { chmod, link, mkdir, readFile, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreBuilder } from '../../src/archive/store-builder.js';
import { scanChangedDirs } from '../../src/archive/changed-dirs.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { livePaths } from '../../src/providers/local/live-paths.js';
import { rng, seedFrom } from '../helpers/rng.js';
import { waitFor } from '../helpers/wait.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const TOP = 8;
const isRoot = process.getuid?.() === 0;

// What a walk of every directory of the live tree finds (no basis, no hint): the root tree id.
async function fullWalkRoot(h: Harness, workspaceId: string): Promise<string> {
  const src = await DirHandle.open(h.live(workspaceId));
  try {
    return await new StoreBuilder({ store: h.services.archive.objects, basis: null, cache: null, keepMissing: false, limits: h.config.treeLimits, signal: AbortSignal.timeout(60_000) }).build(src);
  } finally {
    await src.close();
  }
}

async function committedRoot(h: Harness, workspaceId: string): Promise<string> {
  const current = (await h.services.archive.current(workspaceId))!;
  return (await h.services.archive.readRecord(workspaceId, current))!.root;
}

// A tree of TOP top directories, each with two levels below and a few files per directory.
async function plant(root: string): Promise<void> {
  for (let t = 0; t < TOP; t++) {
    for (let m = 0; m < 3; m++) {
      const dir = path.join(root, `top${t}`, `mid${m}`, 'leaf');
      await mkdir(dir, { recursive: true });
      for (let f = 0; f < 4; f++) {
        await writeFile(path.join(root, `top${t}`, `mid${m}`, `f${f}.txt`), `top${t} mid${m} f${f}`);
        await writeFile(path.join(dir, `g${f}.txt`), `leaf ${t}.${m}.${f}`);
      }
    }
  }
}

// Waits until the clock is past `ms` (the racily-clean margin must lie behind what was planted).
const clockPast = (ms: number) => waitFor('the clock to pass the planted tree', () => (Date.now() > ms ? true : undefined), 10_000);

describe('persists walk only the directories that changed', () => {
  it('every round commits what a full walk finds, and untouched directories are taken by id', { timeout: 180_000 }, async () => {
    const seed = seedFrom('FLEET_CHANGE_SCAN_SEED');
    const random = rng(seed);
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    await plant(root);
    await clockPast(Date.now() + 1_100);
    expect((await h.persist('ws')).reusedDirectories ?? 0, `seed ${seed}: the first walk is full`).toBe(0);

    let fifos = 0;
    const file = (t: number, m: number, f: number) => path.join(root, `top${t}`, `mid${m}`, 'leaf', `g${f}.txt`);
    const changes: ((round: number) => Promise<string>)[] = [
      async () => {
        // Same size, the mtime put back: only the ctime says it changed.
        const target = file(random.int(0, TOP - 1), random.int(0, 2), random.int(0, 3));
        const before = await stat(target).catch(() => null);
        if (!before?.isFile()) return 'skip';
        await writeFile(target, 'X'.repeat(Number(before.size)));
        await utimes(target, before.atime, before.mtime);
        return `rewrite ${target}`;
      },
      async () => {
        const dir = path.join(root, `top${random.int(0, TOP - 1)}`, `mid${random.int(0, 2)}`);
        await chmod(dir, random.pick([0o700, 0o755, 0o750])).catch(() => undefined);
        return `chmod dir ${dir}`;
      },
      async (round) => {
        const from = file(random.int(0, TOP - 1), random.int(0, 2), random.int(0, 3));
        const to = path.join(root, `top${random.int(0, TOP - 1)}`, `moved-${round}.txt`);
        await rename(from, to).catch(() => undefined);
        return `move ${from} → ${to}`;
      },
      async (round) => {
        const dir = path.join(root, `top${random.int(0, TOP - 1)}`, `mid${random.int(0, 2)}`);
        await rename(dir, `${dir}-r${round}`).catch(() => undefined);
        return `rename dir ${dir}`;
      },
      async () => {
        const dir = path.join(root, `top${random.int(0, TOP - 1)}`, `mid${random.int(0, 2)}`, 'leaf');
        await rm(dir, { recursive: true, force: true });
        await symlink('/etc', dir).catch(() => undefined);
        return `swap ${dir} for a symlink`;
      },
      async (round) => {
        const target = file(random.int(0, TOP - 1), random.int(0, 2), random.int(0, 3));
        await link(target, path.join(root, `top${random.int(0, TOP - 1)}`, `hard-${round}`)).catch(() => undefined);
        return `hard link ${target}`;
      },
      async (round) => {
        // Named by round and count: a round may draw this change twice.
        fifos += 1;
        const at = path.join(root, `top${random.int(0, TOP - 1)}`, `fifo-${round}-${fifos}`);
        execFileSync('mkfifo', [at]);
        return `fifo ${at}`;
      },
      async () => {
        const target = file(random.int(0, TOP - 1), random.int(0, 2), random.int(0, 3));
        await rm(target, { force: true });
        return `delete ${target}`;
      },
      async (round) => {
        const dir = path.join(root, `top${random.int(0, TOP - 1)}`, `mid${random.int(0, 2)}`, 'leaf', `new-${round}`, 'deeper');
        await mkdir(dir, { recursive: true }).catch(() => undefined);
        await writeFile(path.join(dir, 'n.txt'), `new in round ${round}`).catch(() => undefined);
        return `new ${dir}`;
      },
    ];

    let reusedTotal = 0;
    for (let round = 1; round <= 12; round++) {
      const made: string[] = [];
      for (let n = random.int(1, 3); n > 0; n--) made.push(await random.pick(changes)(round));
      const result = await h.persist('ws');
      reusedTotal += result.reusedDirectories ?? 0;
      expect(await committedRoot(h, 'ws'), `seed ${seed}, round ${round} (${made.join('; ')})`).toBe(await fullWalkRoot(h, 'ws'));
    }

    // One file deep in one top directory: every other top directory is taken by id. The scan
    // looks back from the last persist that committed (less the racy margin); a persist that
    // finds nothing changed commits nothing and moves no baseline, so the settling persist gets
    // a change of its own, in top0, after the rounds' changes are past the margin.
    await clockPast(Date.now() + 1_100);
    await writeFile(path.join(root, 'top0', 'settle.txt'), 'settle');
    expect((await h.persist('ws')).unchanged, `seed ${seed}`).toBe(false);
    await writeFile(path.join(root, 'top0', 'only-change.txt'), 'just this');
    const one = await h.persist('ws');
    expect(one.changedFiles, `seed ${seed}`).toBe(1);
    expect(one.reusedDirectories, `seed ${seed}: the untouched top directories are not walked`).toBeGreaterThanOrEqual(TOP - 1);
    expect(await committedRoot(h, 'ws')).toBe(await fullWalkRoot(h, 'ws'));
    // Nothing changed at all: the root itself is taken by id.
    const none = await h.persist('ws');
    expect(none).toMatchObject({ unchanged: true });
    expect(reusedTotal, `seed ${seed}: some rounds took directories by id`).toBeGreaterThan(0);
  });

  it('inside a walked directory only what find listed is stat\'ed; every kind of change to a vouched name is still taken', { timeout: 120_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const dir = path.join(h.live('ws'), 'busy');
    await mkdir(dir);
    for (let i = 0; i < 40; i++) await writeFile(path.join(dir, `f${i}.txt`), `file ${i}`);
    await mkdir(path.join(h.live('ws'), 'other'));
    await writeFile(path.join(h.live('ws'), 'other', 'tick'), 'tick');
    await symlink('/etc/passwd', path.join(dir, 'link'));
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    // The racily-clean second passes, then the walk every later one is compared with.
    await clockPast(Date.now() + 1_100);
    await h.persist('ws');
    const at = (name: string) => path.join(dir, name);
    // Each step changes entries the last persist vouched for, in a way only their ctime shows (or a name now naming another inode).
    const steps: [string, () => Promise<void>][] = [
      ['one new file', async () => writeFile(at('new.txt'), 'new')],
      ['same size, mtime put back', async () => {
        const before = await stat(at('f1.txt'));
        await writeFile(at('f1.txt'), 'FILE 1');
        await utimes(at('f1.txt'), before.atime, before.mtime);
      }],
      ['renamed over another name', async () => rename(at('f2.txt'), at('f3.txt'))],
      ['chmod', async () => chmod(at('f4.txt'), 0o600)],
      // Neither changes the directory's own entries: its names are the previous walk's, not read again.
      ['a file swapped for a symlink', async () => {
        await rm(at('f5.txt'));
        await symlink('/etc/shadow', at('f5.txt'));
      }],
      ['the symlink swapped for a file', async () => {
        await rm(at('link'));
        await writeFile(at('link'), 'now a file');
      }],
      ['the FIFO swapped for a directory', async () => {
        await rm(at('fifo'));
        await mkdir(at('fifo'));
        await writeFile(path.join(at('fifo'), 'inside.txt'), 'inside');
      }],
      ['a hard link made to a vouched file', async () => link(at('f6.txt'), at('f6-link.txt'))],
      ['a file deleted', async () => rm(at('f7.txt'))],
    ];
    // The steps that leave the directory's own entries as they were (its ctime too).
    const sameNames = new Set(['same size, mtime put back', 'chmod']);
    for (const [what, step] of steps) {
      // The step before changed the tree just before its persist: that change lies before that
      // persist's line (drawn on the filesystem's clock, change-stamp.ts), so it is not looked at again.
      await step();
      const result = await h.persist('ws');
      expect(await committedRoot(h, 'ws'), what).toBe(await fullWalkRoot(h, 'ws'));
      // Most of the directory is neither changed nor young: taken as recorded.
      expect(result.unstattedEntries ?? 0, what).toBeGreaterThan(20);
      // The root's names are never read again (its entries do not change); the directory's only when they changed.
      // When they did not: the root and the directory are walked unlisted (other/ is not walked at all).
      if (sameNames.has(what)) expect(result.unlistedDirectories, what).toBe(2);
      else expect(result.unlistedDirectories, what).toBeGreaterThanOrEqual(1);
    }
  });

  it('a directory moved over another keeps nothing of the one it replaced: its unchanged entries are not the old names\' entries', { timeout: 120_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    // Two directories with the same names, same sizes and the same mtimes, different bytes; one level deeper too.
    const when = new Date(Date.now() - 60_000);
    for (const [dir, fill] of [['a', 'A'], ['b', 'B'], ['x', 'X'], ['y', 'Y']] as const) {
      const leaf = dir === 'x' || dir === 'y' ? path.join(root, dir, 'sub', 'deep') : path.join(root, dir);
      await mkdir(leaf, { recursive: true });
      for (let i = 0; i < 30; i++) {
        await writeFile(path.join(leaf, `f${i}.txt`), fill.repeat(16));
        await utimes(path.join(leaf, `f${i}.txt`), when, when);
      }
    }
    await clockPast(Date.now() + 1_100);
    await h.persist('ws');
    const steps: [string, () => Promise<void>][] = [
      // b/f* now name a's inodes, whose ctimes are as old as the previous walk.
      ['a moved over b', async () => {
        await rm(path.join(root, 'b'), { recursive: true });
        await rename(path.join(root, 'a'), path.join(root, 'b'));
      }],
      // y/sub and y/sub/deep are x's, unchanged themselves, beneath a directory that was moved.
      ['x moved over y (one level deeper)', async () => {
        await rm(path.join(root, 'y'), { recursive: true });
        await rename(path.join(root, 'x'), path.join(root, 'y'));
      }],
    ];
    for (const [what, step] of steps) {
      await step();
      await h.persist('ws');
      expect(await committedRoot(h, 'ws'), what).toBe(await fullWalkRoot(h, 'ws'));
    }
  });

  it('with FLEET_PERSIST_CHANGE_SCAN=false every directory is walked', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2', FLEET_PERSIST_CHANGE_SCAN: 'false' });
    await h.provision('ws');
    await plant(h.live('ws'));
    await clockPast(Date.now() + 1_100);
    await h.persist('ws');
    await writeFile(path.join(h.live('ws'), 'top0', 'only-change.txt'), 'just this');
    const one = await h.persist('ws');
    expect(one.changedFiles).toBe(1);
    expect(one.reusedDirectories ?? 0).toBe(0);
    expect(await committedRoot(h, 'ws')).toBe(await fullWalkRoot(h, 'ws'));
  });
});

describe('the line a persist draws (archive/change-stamp.ts)', () => {
  // Whether the line the last persist's walk drew is the filesystem's own, from the cache file.
  const exactLine = async (h: Harness): Promise<boolean> => {
    await h.services.statCaches.flush();
    const file = path.join(livePaths(h.config.paths.liveRoot, 'ws').meta, 'stat-cache.json');
    const log = (await readFile(`${file}.log`, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const facts = JSON.parse(log.at(-1) ?? (await readFile(file, 'utf8'))) as { changedAfter?: string; exactLine?: boolean };
    expect(facts.changedAfter, 'a line is recorded').toMatch(/^\d+$/);
    return facts.exactLine === true;
  };

  it('a change made just before a persist is not looked at again by the next; a writer racing the persists loses nothing', { timeout: 180_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    await plant(root);
    await h.persist('ws');
    expect(await exactLine(h), 'the line is the filesystem\'s own').toBe(true);
    // Changed just before the persist (no second left to pass): the next persist walks only top1.
    await writeFile(path.join(root, 'top0', 'mid0', 'leaf', 'g0.txt'), 'changed at once');
    await h.persist('ws');
    await writeFile(path.join(root, 'top1', 'mid0', 'leaf', 'g0.txt'), 'then this');
    const next = await h.persist('ws');
    expect(next.changedFiles).toBe(1);
    expect(next.reusedDirectories, 'top0 is taken by id').toBeGreaterThanOrEqual(TOP - 1);
    expect(await committedRoot(h, 'ws')).toBe(await fullWalkRoot(h, 'ws'));

    // A writer rewriting files, same size, the mtime put back, while persists run (one file every
    // 10 ms: most reads find a file settled, and the writer's next write may follow a read at once):
    // whatever it wrote after a persist read a file is taken by a later one.
    const writer = spawn('python3', ['-c', [
      'import os, sys, time',
      'files = [os.path.join(sys.argv[1], "top%d" % t, "mid0", "leaf", "g%d.txt" % f) for t in range(4) for f in range(4)]',
      'i = 0',
      'while True:',
      '    for p in files:',
      '        with open(p, "w") as out: out.write("v%09d" % i)',
      '        os.utime(p, (1600000000, 1600000000))',
      '        i += 1',
      '        time.sleep(0.01)',
    ].join('\n'), root], { stdio: 'ignore' });
    const exited = new Promise((resolve) => writer.once('exit', resolve));
    let taken = 0;
    try {
      const first = path.join(root, 'top0', 'mid0', 'leaf', 'g0.txt');
      await waitFor('the writer to begin', async () => ((await readFile(first, 'utf8')).startsWith('v') ? true : undefined), 30_000);
      for (let i = 0; i < 30; i++) taken += (await h.persist('ws')).changedFiles ?? 0;
    } finally {
      writer.kill('SIGKILL');
      await exited;
    }
    expect(taken, 'the persists raced the writer').toBeGreaterThan(30);
    await h.persist('ws');
    expect(await committedRoot(h, 'ws'), 'the last state the writer left').toBe(await fullWalkRoot(h, 'ws'));
  });

  it.skipIf(!isRoot)('a walk that meets another filesystem inside the tree draws the host clock\'s line, and so do the walks after it', { timeout: 120_000 }, async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    await plant(root);
    const mount = path.join(root, 'top0', 'mounted');
    await mkdir(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]);
    try {
      await writeFile(path.join(mount, 'inside.txt'), 'on another device');
      // Past the host clock's margin: the next walk may take directories by id from this one.
      await clockPast(Date.now() + 1_100);
      await h.persist('ws');
      expect(await exactLine(h), 'the first walk met the tmpfs').toBe(false);
      // The next walk takes top0 by id (it meets no other device itself): it keeps the clock's line.
      await writeFile(path.join(root, 'top1', 'mid0', 'leaf', 'g0.txt'), 'elsewhere');
      const next = await h.persist('ws');
      expect(next.reusedDirectories).toBeGreaterThan(0);
      expect(await exactLine(h)).toBe(false);
      expect(await committedRoot(h, 'ws')).toBe(await fullWalkRoot(h, 'ws'));
    } finally {
      execFileSync('umount', ['-l', mount]);
    }
  });
});

describe('scanChangedDirs (the real find)', () => {
  it('names what changed after a time, beneath the root it was handed; answers null when it cannot be complete', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    const root = h.live('ws');
    await mkdir(path.join(root, 'a', 'b'), { recursive: true });
    await writeFile(path.join(root, 'a', 'b', 'old.txt'), 'old');
    await mkdir(path.join(root, 'quiet'), { recursive: true });
    await clockPast(Date.now() + 50);
    const since = BigInt(Date.now()) * 1_000_000n;
    await clockPast(Date.now() + 50);
    await writeFile(path.join(root, 'a', 'b', 'old.txt'), 'new');
    const handle = await DirHandle.open(root);
    try {
      const options = { sinceNs: since, maxRecords: 1_000, systemPath: h.config.systemPath, signal: AbortSignal.timeout(30_000) };
      const scanned = (await scanChangedDirs(handle, options))!;
      expect(scanned.changedEntries).toBe(1);
      expect(scanned.rootClean).toBe(false);
      expect(scanned.reusable(Buffer.from('a/b'))).toBe(false);
      expect(scanned.reusable(Buffer.from('quiet'))).toBe(true);
      // More changed entries than allowed: walk everything.
      expect(await scanChangedDirs(handle, { ...options, maxRecords: 0 })).toBeNull();
      // A find that complained (an entry vanished under it) or failed may have missed something: walk everything.
      const shims = path.join(h.config.paths.home, 'shims');
      await mkdir(shims, { recursive: true });
      await writeFile(path.join(shims, 'find'), "#!/bin/sh\nprintf 'f a/x\\0'\necho \"find: './a/y': No such file or directory\" >&2\n", { mode: 0o755 });
      expect(await scanChangedDirs(handle, { ...options, systemPath: shims })).toBeNull();
      await writeFile(path.join(shims, 'find'), "#!/bin/sh\nprintf 'f a/x\\0'\nexit 1\n", { mode: 0o755 });
      expect(await scanChangedDirs(handle, { ...options, systemPath: shims })).toBeNull();
      // The same shim, quiet and successful, is believed (so the two refusals above are the complaint and the exit).
      await writeFile(path.join(shims, 'find'), "#!/bin/sh\nprintf 'f a/x\\0'\n", { mode: 0o755 });
      expect((await scanChangedDirs(handle, { ...options, systemPath: `${shims}:${h.config.systemPath}` }))?.changedEntries).toBe(1);
    } finally {
      await handle.close();
    }
  });
});
