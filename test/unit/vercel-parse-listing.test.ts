import { execFileSync } from 'node:child_process';
import { lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UnsafeListingError } from '../../src/errors/unsafe-listing-error.js';
import { parseListing, type ParseOptions } from '../../src/providers/vercel/parse-listing.js';
import { LISTING_RECORD } from '../../src/providers/vercel/tree-scripts.js';
import { DEFAULT_TREE_LIMITS } from '../../src/tree/tree-limits.js';
import { chunked } from '../helpers/vercel-standin/tar-fixture.js';

const NUL = Buffer.of(0);
const OPTIONS: ParseOptions = { limits: DEFAULT_TREE_LIMITS };
const parse = (bytes: Buffer, options: ParseOptions = OPTIONS) => parseListing(chunked(bytes, 7), options);
const record = (fields: string, rel: string | Buffer, target: string | Buffer = '') => Buffer.concat([Buffer.from(fields), NUL, Buffer.from(rel), NUL, Buffer.from(target), NUL]);
const file = (rel: string | Buffer, extra = '') => record(`f 1 644 1.5 2.25 7 9${extra}`, rel);
const dir = (rel: string) => record('d 4096 755 1 1 8 9', rel);

let scratch: string;

beforeEach(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'parse-listing-test-'));
});

afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('parseListing', () => {
  it('reads what GNU find prints: odd names as bytes, exact nanosecond times, modes, targets, parents first', async () => {
    const root = path.join(scratch, 'tree');
    await mkdir(path.join(root, 'sub'), { recursive: true });
    const odd = Buffer.concat([Buffer.from('bad'), Buffer.of(0xff, 0x0a), Buffer.from('name')]);
    await writeFile(Buffer.concat([Buffer.from(`${root}/sub/`), odd]), 'odd');
    await writeFile(path.join(root, '-rf'), 'dash');
    await symlink('../nowhere', path.join(root, 'link'));
    execFileSync('chmod', ['4750', path.join(root, '-rf')]);
    const raw = execFileSync('find', ['.', '-mindepth', '1', '-printf', LISTING_RECORD], { cwd: root });
    const { entries, skipped, truncated } = await parse(raw);
    expect(truncated).toBe(false);
    expect(skipped).toEqual({ special: 0, overLimit: 0, inconsistent: 0 });
    const oddKey = Buffer.concat([Buffer.from('sub/'), odd]).toString('latin1');
    expect([...entries.keys()].sort()).toEqual(['-rf', 'link', 'sub', oddKey].sort());
    const dash = entries.get('-rf')!;
    const stats = await lstat(path.join(root, '-rf'), { bigint: true });
    expect(dash).toMatchObject({ type: 'file', size: 4, mode: 0o4750, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, ino: stats.ino, dev: stats.dev });
    expect(entries.get('link')).toMatchObject({ type: 'symlink', target: Buffer.from('../nowhere') });
    expect(entries.get(oddKey)!.rel).toEqual(Buffer.concat([Buffer.from('sub/'), odd]));
  });

  it.each([
    ['a .. segment', file('a/../../escape')],
    ['an absolute path', file('/etc/passwd')],
    ['the root itself', file('.')],
    ['an unknown type', record('x 1 644 1 1 1 1', 'a')],
    ['a mode over 7777', record('f 1 17777 1 1 1 1', 'a')],
    ['a mode that is not octal', record('f 1 999 1 1 1 1', 'a')],
    ['a size that is not a number', record('f -1 644 1 1 1 1', 'a')],
    ['a malformed time', record('f 1 644 1e9 1 1 1', 'a')],
    ['too few fields', record('f 1 644 1 1 1', 'a')],
    ['a record cut short', Buffer.concat([dir('a'), Buffer.from('f 1 644 1 1 1 1'), NUL, Buffer.from('a/b')])],
    ['a fields line longer than any', record(`f 1 644 1 1 1 ${'9'.repeat(300)}`, 'a')],
    ['a symlink target over PATH_MAX', record('l 1 777 1 1 1 1', 'a', 'x'.repeat(5000))],
  ])('refuses %s', async (_label, bytes) => {
    await expect(parse(bytes)).rejects.toBeInstanceOf(UnsafeListingError);
  });

  it('skips, and counts, what a live or deep tree legitimately produces', async () => {
    const deep = `${'d/'.repeat(2_100)}leaf`;
    const huge = `${'x/'.repeat(40_000)}leaf`;
    const { entries, skipped } = await parse(
      Buffer.concat([
        dir('a'),
        file('a/one'),
        file('a/one'),
        file('missing-parent/x'),
        file('a/one/under-a-file'),
        record('s 0 755 1 1 1 1', 'socket'),
        record('c 0 600 1 1 1 1', 'a/tty'),
        record('l 1 777 1 1 1 1', 'replaced-link', ''),
        file(deep),
        file(huge),
        file('kept'),
      ]),
    );
    expect([...entries.keys()]).toEqual(['a', 'a/one', 'kept']);
    expect(skipped).toEqual({ special: 2, overLimit: 2, inconsistent: 4 });
  });

  it('normalises ./ and // and keeps the parent rule optional (the second look at files)', async () => {
    const { entries } = await parse(Buffer.concat([file('./a//b/'), file('./c')]), { ...OPTIONS, requireParents: false });
    expect([...entries.keys()]).toEqual(['a/b', 'c']);
  });

  it('stops at the entry limit and says so', async () => {
    const listing = await parse(Buffer.concat([file('a'), file('b'), file('c')]), { limits: { ...DEFAULT_TREE_LIMITS, maxEntries: 2 } });
    expect([...listing.entries.keys()]).toEqual(['a', 'b']);
    expect(listing.truncated).toBe(true);
  });

  it('takes times before 1970 and up to ten decimals exactly (the tenth is below a nanosecond)', async () => {
    const { entries } = await parse(record('f 1 644 -1.5 1796149127.9257840379 1 1', 'old'));
    expect(entries.get('old')).toMatchObject({ mtimeNs: -1_500_000_000n, ctimeNs: 1_796_149_127_925_784_037n });
  });
});
