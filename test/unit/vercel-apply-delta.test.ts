import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyOf } from '../../src/archive/prior-index.js';
import { applyDelta, type ApplyDeltaOptions } from '../../src/providers/vercel/apply-delta.js';
import type { ListedEntry } from '../../src/providers/vercel/parse-listing.js';
import { UnsafeTarEntryError } from '../../src/providers/vercel/unsafe-tar-entry-error.js';
import { DirCursor } from '../../src/tree/dir-cursor.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { storedMtimeNs } from '../../src/tree/file-times.js';
import { chunked, paxEntry, tarArchive, tarEntry } from '../helpers/vercel-standin/tar-fixture.js';

let scratch: string;
let mirror: string;
let outside: string;
let root: DirHandle;
let staging: DirHandle;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'apply-delta-test-'));
  mirror = path.join(scratch, 'tree');
  outside = path.join(scratch, 'outside');
  for (const dir of [mirror, outside, path.join(scratch, 'staging')]) await mkdir(dir);
  root = await DirHandle.open(mirror);
  staging = await DirHandle.open(path.join(scratch, 'staging'));
});

afterEach(async () => {
  await root.close();
  await staging.close();
  await rm(scratch, { recursive: true, force: true });
});

// The listing of a wanted file (and the same as its second look, unless `restat` says otherwise).
function listed(rel: string | Buffer, size: number, extra: Partial<ListedEntry> = {}): ListedEntry {
  const bytes = Buffer.from(rel);
  return { rel: bytes, key: keyOf(bytes), type: 'file', size, mode: 0o640, mtimeNs: 1_700_000_000_123_456_789n, ctimeNs: 1_700_000_000_123_456_789n, ino: 5n, dev: 9n, ...extra };
}

async function apply(archive: Buffer | AsyncIterable<Buffer>, wanted: readonly ListedEntry[], restat: readonly ListedEntry[] = wanted) {
  const cursor = new DirCursor(root);
  const options: ApplyDeltaOptions = {
    source: Buffer.isBuffer(archive) ? chunked(archive) : archive,
    cursor,
    staging,
    wanted: new Map(wanted.map((e) => [e.key, e])),
    restat: new Map(restat.map((e) => [e.key, e])),
    signal: AbortSignal.timeout(10_000),
  };
  try {
    return await applyDelta(options);
  } finally {
    await cursor.close();
  }
}

describe('applyDelta', () => {
  it('writes the files asked for with their listed mode and mtime, and nothing else', async () => {
    await mkdir(path.join(mirror, 'dir'));
    const want = [listed('dir/file.txt', 5), listed('top', 3)];
    const archive = tarArchive(
      tarEntry({ name: './dir/file.txt', content: 'hello' }),
      tarEntry({ name: 'dir/file.txt', content: 'again' }),
      tarEntry({ name: 'top', type: '2', linkname: '/etc/passwd' }),
      tarEntry({ name: 'top', type: '1', linkname: 'dir/file.txt' }),
      tarEntry({ name: 'dev', type: '3' }),
      tarEntry({ name: 'top', content: 'top' }),
      tarEntry({ name: 'stray', content: 'not asked for' }),
    );
    const outcome = await apply(archive, want);
    expect(outcome).toMatchObject({ unexpected: 5, unstable: 0 });
    expect([...outcome.written.keys()].sort()).toEqual(['dir/file.txt', 'top']);
    expect(await readFile(path.join(mirror, 'dir/file.txt'), 'utf8')).toBe('hello');
    const stats = await lstat(path.join(mirror, 'top'), { bigint: true });
    expect(Number(stats.mode & 0o7777n)).toBe(0o640);
    expect(stats.mtimeNs).toBe(storedMtimeNs(want[1]!.mtimeNs));
    expect(outcome.written.get('top')).toEqual({ ino: stats.ino, ctimeNs: stats.ctimeNs });
    expect(await readdir(mirror)).toEqual(['dir', 'top']);
    expect(await readdir(path.join(scratch, 'staging'))).toEqual([]);
  });

  it('takes a file only when its second look matches the listing', async () => {
    const archive = tarArchive(tarEntry({ name: 'torn', content: 'torn' }), tarEntry({ name: 'gone', content: 'gone' }), tarEntry({ name: 'resized', content: 'longer' }));
    const want = [listed('torn', 4), listed('gone', 4), listed('resized', 2)];
    const outcome = await apply(archive, want, [listed('torn', 4, { ctimeNs: 1n }), listed('resized', 2)]);
    expect(outcome).toMatchObject({ unstable: 3 });
    expect(await readdir(mirror)).toEqual([]);
  });

  it('reads what GNU tar writes from a NUL list: long names, newlines, bytes that are not UTF-8', async () => {
    const source = path.join(scratch, 'source');
    const names = [Buffer.from(`${'d'.repeat(90)}/${'f'.repeat(150)}.txt`), Buffer.from('new\nline'), Buffer.concat([Buffer.from('bad'), Buffer.of(0xff)]), Buffer.from('-rf')];
    await mkdir(path.join(source, 'd'.repeat(90)), { recursive: true });
    await mkdir(path.join(mirror, 'd'.repeat(90)));
    for (const name of names) await writeFile(Buffer.concat([Buffer.from(`${source}/`), name]), name);
    await writeFile(path.join(scratch, 'list'), Buffer.concat(names.flatMap((n) => [Buffer.from('./'), n, Buffer.of(0)])));
    const archive = execFileSync('tar', ['-cf', '-', '--format=gnu', '--null', '--no-recursion', '-T', path.join(scratch, 'list')], { cwd: source });
    const outcome = await apply(archive, names.map((n) => listed(n, n.length)));
    expect(outcome.written.size).toBe(4);
    for (const name of names) expect(await readFile(Buffer.concat([Buffer.from(`${mirror}/`), name]))).toEqual(name);
  });

  it.each([
    ['an absolute path', tarArchive(tarEntry({ name: '/etc/evil', content: 'x' }))],
    ['a .. segment', tarArchive(tarEntry({ name: 'a/../../evil', content: 'x' }))],
    ['a pax path with ..', tarArchive(paxEntry({ path: '../evil' }), tarEntry({ name: 'ok', content: 'x' }))],
  ])('refuses %s, writing nothing', async (_label, archive) => {
    await expect(apply(archive, [listed('evil', 1), listed('ok', 1)])).rejects.toBeInstanceOf(UnsafeTarEntryError);
    expect(await readdir(scratch)).toEqual(['outside', 'staging', 'tree']);
    expect(await readdir(mirror)).toEqual([]);
  });

  it('never writes through a symlink in the mirror: not as a parent, and a link at the name is replaced, not followed', async () => {
    await symlink(outside, path.join(mirror, 'escape'));
    await expect(apply(tarArchive(tarEntry({ name: 'escape/pwned', content: 'x' })), [listed('escape/pwned', 1)])).rejects.toMatchObject({ code: expect.stringMatching(/^(ELOOP|ENOTDIR)$/) });
    expect(await readdir(outside)).toEqual([]);
    const victim = path.join(outside, 'victim.txt');
    await writeFile(victim, 'original');
    await symlink(victim, path.join(mirror, 'f'));
    await apply(tarArchive(tarEntry({ name: 'f', content: 'new' })), [listed('f', 3)]);
    expect(await readFile(victim, 'utf8')).toBe('original');
    expect((await lstat(path.join(mirror, 'f'))).isFile()).toBe(true);
  });

  it('replaces a directory that is in a file\'s place', async () => {
    await mkdir(path.join(mirror, 'was-dir/inner'), { recursive: true });
    await apply(tarArchive(tarEntry({ name: 'was-dir', content: 'file' })), [listed('was-dir', 4)]);
    expect(await readFile(path.join(mirror, 'was-dir'), 'utf8')).toBe('file');
  });

  it('rejects a corrupt header and a truncated archive', async () => {
    const good = tarEntry({ name: 'x', content: 'hello world' });
    const corrupt = Buffer.from(good);
    corrupt[0] = 0x41;
    await expect(apply(tarArchive(corrupt), [listed('x', 11)])).rejects.toThrow();
    await expect(apply(good.subarray(0, 520), [listed('x', 11)])).rejects.toThrow();
    // A header that promises far more content than follows, and bytes that are no tar at all.
    const promised = Buffer.from(tarEntry({ name: 'x', content: 'hello world' }));
    promised.write('77777777777\u0000', 124, 12, 'latin1');
    let sum = 0;
    promised.fill(0x20, 148, 156);
    for (const byte of promised.subarray(0, 512)) sum += byte;
    promised.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'latin1');
    await expect(apply(tarArchive(promised), [listed('x', 11)])).rejects.toThrow();
    await expect(apply(Buffer.alloc(2048, 0x41), [listed('x', 11)])).rejects.toThrow();
    expect(await readdir(mirror)).toEqual([]);
  });

  it('takes links, devices and pax-renamed entries for what they are: a link named like a wanted file is not written', async () => {
    const archive = tarArchive(
      tarEntry({ name: 'want-a', type: '2', linkname: '/etc/passwd' }),
      tarEntry({ name: 'want-b', type: '1', linkname: 'want-a' }),
      tarEntry({ name: 'want-c', type: '3' }),
      paxEntry({ path: 'want-d', linkpath: '/etc/shadow' }),
      tarEntry({ name: 'ignored-name', type: '2', linkname: 'x' }),
      paxEntry({ path: 'caf\u00e9' }),
      tarEntry({ name: 'plain', content: 'pax' }),
    );
    const outcome = await apply(archive, [listed('want-a', 0), listed('want-b', 0), listed('want-c', 0), listed('want-d', 0), listed(Buffer.from('caf\u00e9', 'utf8'), 3)]);
    expect(outcome).toMatchObject({ unexpected: 4 });
    expect(await readdir(mirror)).toEqual(['caf\u00e9']);
    expect(await readFile(path.join(mirror, 'caf\u00e9'), 'utf8')).toBe('pax');
  });
});
