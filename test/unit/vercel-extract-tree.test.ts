import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractTree } from '../../src/providers/vercel/extract-tree.js';
import { UnsafeTarEntryError } from '../../src/providers/vercel/unsafe-tar-entry-error.js';
import { chunked, paxEntry, tarArchive, tarEntry } from '../helpers/vercel-standin/tar-fixture.js';
import { listTree } from '../helpers/vercel-standin/tree-listing.js';

let scratch: string;
let dest: string;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'extract-tree-test-'));
  dest = path.join(scratch, 'dest');
  await mkdir(dest);
});

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('extractTree', () => {
  it('extracts files, directories and symlinks as stored, with modes and times', async () => {
    const archive = tarArchive(
      tarEntry({ name: './', type: '5', mode: 0o755 }),
      tarEntry({ name: './dir/', type: '5', mode: 0o750, mtime: 1_600_000_000 }),
      tarEntry({ name: './dir/file.txt', content: 'hello', mode: 0o640, mtime: 1_600_000_001 }),
      tarEntry({ name: './run.sh', content: '#!/bin/sh\n', mode: 0o4755 }),
      tarEntry({ name: './link', type: '2', linkname: '/etc/passwd' }),
    );
    const summary = await extractTree(chunked(archive), dest);
    expect(summary).toEqual({ files: 2, directories: 1, symlinks: 1, skipped: 0 });
    expect(await readFile(path.join(dest, 'dir/file.txt'), 'utf8')).toBe('hello');
    const file = await lstat(path.join(dest, 'dir/file.txt'));
    expect(file.mode & 0o7777).toBe(0o640);
    expect(Math.floor(file.mtimeMs / 1000)).toBe(1_600_000_001);
    expect((await lstat(path.join(dest, 'run.sh'))).mode & 0o7777).toBe(0o755);
    expect((await lstat(path.join(dest, 'dir'))).mode & 0o777).toBe(0o750);
    expect(Math.floor((await lstat(path.join(dest, 'dir'))).mtimeMs / 1000)).toBe(1_600_000_000);
    expect(await readlink(path.join(dest, 'link'))).toBe('/etc/passwd');
  });

  it('reads what GNU tar writes in both pax and gnu formats (long names, unicode, hard links)', async () => {
    const source = path.join(scratch, 'source');
    const long = `${'d'.repeat(90)}/${'f'.repeat(150)}.txt`;
    await mkdir(path.join(source, path.dirname(long)), { recursive: true });
    await writeFile(path.join(source, long), 'long');
    await writeFile(path.join(source, 'ünïcödé ✓.txt'), 'u');
    await writeFile(path.join(source, 'hard-a'), 'same');
    execFileSync('ln', [path.join(source, 'hard-a'), path.join(source, 'hard-b')]);
    await symlink(long, path.join(source, 'long-link'));
    for (const format of ['posix', 'gnu']) {
      const target = path.join(scratch, `out-${format}`);
      await mkdir(target);
      const archive = execFileSync('tar', ['-cf', '-', `--format=${format}`, '-C', source, '.'], { maxBuffer: 1 << 26 });
      await extractTree(chunked(archive, 1000), target);
      expect(await listTree(target)).toEqual(await listTree(source));
    }
  });

  it('applies pax path overrides', async () => {
    const archive = tarArchive(paxEntry({ path: 'from-pax.txt' }), tarEntry({ name: 'truncated', content: 'x' }));
    await extractTree(chunked(archive), dest);
    expect(await readFile(path.join(dest, 'from-pax.txt'), 'utf8')).toBe('x');
  });

  it.each([
    ['an absolute path', tarArchive(tarEntry({ name: '/etc/evil', content: 'x' }))],
    ['a .. segment', tarArchive(tarEntry({ name: 'a/../../evil', content: 'x' }))],
    ['a pax path with ..', tarArchive(paxEntry({ path: '../evil' }), tarEntry({ name: 'ok', content: 'x' }))],
    ['a hard link out of the tree', tarArchive(tarEntry({ name: 'h', type: '1', linkname: '../../etc/passwd' }))],
  ])('refuses %s', async (_label, archive) => {
    await expect(extractTree(chunked(archive), dest)).rejects.toBeInstanceOf(UnsafeTarEntryError);
    expect(await listTree(scratch)).toEqual({ dest: 'dir' });
  });

  it('never writes through a symlink planted earlier in the archive', async () => {
    const outside = path.join(scratch, 'outside');
    await mkdir(outside);
    const archive = tarArchive(tarEntry({ name: 'escape', type: '2', linkname: outside }), tarEntry({ name: 'escape/pwned', content: 'x' }));
    await expect(extractTree(chunked(archive), dest)).rejects.toBeInstanceOf(UnsafeTarEntryError);
    expect(await listTree(outside)).toEqual({});
  });

  it('replaces a planted symlink by a regular file instead of following it', async () => {
    const victim = path.join(scratch, 'victim.txt');
    await writeFile(victim, 'original');
    const archive = tarArchive(tarEntry({ name: 'f', type: '2', linkname: victim }), tarEntry({ name: 'f', content: 'new' }));
    await extractTree(chunked(archive), dest);
    expect(await readFile(victim, 'utf8')).toBe('original');
    expect((await lstat(path.join(dest, 'f'))).isFile()).toBe(true);
    expect(await readFile(path.join(dest, 'f'), 'utf8')).toBe('new');
  });

  it('skips device nodes and FIFOs', async () => {
    const archive = tarArchive(tarEntry({ name: 'null', type: '3' }), tarEntry({ name: 'pipe', type: '6' }), tarEntry({ name: 'kept', content: 'k' }));
    const summary = await extractTree(chunked(archive), dest);
    expect(summary.skipped).toBe(2);
    expect(await listTree(dest)).toEqual({ kept: expect.stringMatching(/^file 644 /) });
  });

  it('skips entries whose path is past the archive path limit instead of failing (a tree nested past PATH_MAX)', async () => {
    const deep = `${Array.from({ length: 2_100 }, () => 'd').join('/')}/leaf.txt`;
    const archive = tarArchive(paxEntry({ path: deep }), tarEntry({ name: 'deep-placeholder', content: 'deep' }), tarEntry({ name: 'kept', content: 'k' }));
    const summary = await extractTree(chunked(archive), dest);
    expect(summary).toMatchObject({ files: 1, skipped: 1 });
    expect(await listTree(dest)).toEqual({ kept: expect.stringMatching(/^file 644 /) });
  });

  it('copies hard links to files extracted earlier', async () => {
    const archive = tarArchive(tarEntry({ name: 'a', content: 'same' }), tarEntry({ name: 'b', type: '1', linkname: 'a' }));
    await extractTree(chunked(archive), dest);
    expect(await readFile(path.join(dest, 'b'), 'utf8')).toBe('same');
  });

  it('rejects a corrupt header and a truncated archive', async () => {
    const good = tarEntry({ name: 'x', content: 'hello world' });
    const corrupt = Buffer.from(good);
    corrupt[0] = 0x41;
    await expect(extractTree(chunked(tarArchive(corrupt)), dest)).rejects.toThrow();
    await expect(extractTree(chunked(good.subarray(0, 520)), path.join(scratch, 'dest'))).rejects.toThrow();
  });
});
