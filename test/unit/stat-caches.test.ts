// The in-memory stat caches of a persist process: a persist's own cache is kept (the next one
// reads no file), files are written in the background (the newest per file), memory is bounded.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NO_FACTS, statCacheLog, type ScanFacts, type StatCacheEntry } from '../../src/archive/stat-cache.js';
import { StatCaches } from '../../src/archive/stat-caches.js';

// Entries as a cache holds them (by path).
const byPath = (entries: StatCacheEntry[]) => new Map(entries.map((e) => [e.path, e]));

const OBJECT = 'a'.repeat(64);
const tree = { dev: 1n, ino: 2n };
const entry = (p: string, size = 1): StatCacheEntry => ({ path: p, size, mode: 0o644, mtimeNs: 1_700_000_000_000_000_001n, ctimeNs: 1_700_000_000_000_000_002n, ino: 3n, object: OBJECT });

let dir: string;
let errors: unknown[];
const caches = (max?: number) => new StatCaches((_file, error) => errors.push(error), max);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'stat-caches-'));
  errors = [];
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('StatCaches', () => {
  it('keeps a saved cache in memory for its revision and tree, and writes its file in the background', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    c.save(file, 'r1', tree, byPath([entry('a'), entry('b/c')]));
    const kept = await c.load(file, 'r1', tree);
    expect([...kept!.entries.keys()]).toEqual(['a', 'b/c']);
    await c.flush();
    // Another process reads the file: the same entries.
    const read = await caches().load(file, 'r1', tree);
    expect([...read!.entries.values()]).toEqual([entry('a'), entry('b/c')]);
    // Written without facts: nothing may be taken from it by id.
    expect(read!.facts).toEqual(NO_FACTS);
    // Not for another revision, nor another tree (a restore swapped the root).
    expect(await c.load(file, 'r2', tree)).toBeNull();
    expect(await c.load(file, 'r1', { dev: 1n, ino: 9n })).toBeNull();
    expect(errors).toEqual([]);
  });

  it('tells a root made again under the same inode number by its birth time, in memory and on disk', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    const born = { dev: 1n, ino: 2n, birthtimeNs: 1_700_000_000_000_000_000n };
    c.save(file, 'r1', born, byPath([entry('a')]));
    await c.flush();
    expect(await c.load(file, 'r1', born)).not.toBeNull();
    // Destroyed and restored: the freed inode number came back, the birth time did not.
    const reborn = { ...born, birthtimeNs: born.birthtimeNs + 1n };
    expect(await c.load(file, 'r1', reborn)).toBeNull();
    expect(await caches().load(file, 'r1', reborn)).toBeNull();
    expect(await caches().load(file, 'r1', born)).not.toBeNull();
  });

  it('writes only the newest of many saves of one file: the first as a snapshot, the newest as one log line after it', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    for (let i = 0; i < 50; i++) c.save(file, `r${i}`, tree, byPath([entry('f', i)]));
    await c.flush();
    const body = JSON.parse(await readFile(file, 'utf8')) as { revision: string; entries: unknown[][] };
    expect(body.revision).toBe('r0');
    expect(body.entries).toEqual([['f', 0, 0o644, '1700000000000000001', '1700000000000000002', '3', OBJECT]]);
    const lines = (await readFile(statCacheLog(file), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { from: string; revision: string; set: unknown[][] });
    expect(lines.map((l) => [l.from, l.revision, l.set])).toEqual([['r0', 'r49', [['f', 49, 0o644, '1700000000000000001', '1700000000000000002', '3', OBJECT]]]]);
    expect([...(await caches().load(file, 'r49', tree))!.entries.values()]).toEqual([entry('f', 49)]);
  });

  it('a chain of saves reads back, in another process, as each revision had it: entries set and removed, facts and directories', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    const saved: [string, Map<string, StatCacheEntry>, ScanFacts][] = [
      ['r1', byPath([entry('a'), entry('b/c'), entry('b/d')]), { exact: false, fullWalkAt: 0, dirs: new Map([['b', '1:10']]), changedAfterNs: null, exactLine: false }],
      ['r2', byPath([entry('a', 2), entry('b/c'), entry('e')]), { exact: true, fullWalkAt: 1_796_000_000_000, dirs: new Map([['b', '1:10'], ['x', '1:11']]), changedAfterNs: 1_796_000_000_123_456_789n, exactLine: true }],
      // A walk that drew the host clock's line (it met another device).
      ['r3', byPath([entry('a', 2), entry('e'), entry('f/g')]), { exact: true, fullWalkAt: 1_796_000_000_000, dirs: new Map([['f', '1:12'], ['x', '1:13']]), changedAfterNs: 1_796_000_059_000_000_000n, exactLine: false }],
      // The same revision again (a walk that found nothing new moved its facts).
      ['r3', byPath([entry('a', 2), entry('e'), entry('f/g')]), { exact: true, fullWalkAt: 1_796_000_060_000, dirs: new Map([['f', '1:12'], ['x', '1:13']]), changedAfterNs: 1_796_000_060_000_000_001n, exactLine: true }],
    ];
    for (const [revision, entries, facts] of saved) {
      c.save(file, revision, tree, entries, facts);
      await c.flush();
    }
    expect(JSON.parse(await readFile(file, 'utf8')).revision).toBe('r1');
    expect((await readFile(statCacheLog(file), 'utf8')).split('\n').filter(Boolean)).toHaveLength(3);
    for (const [i, [revision, entries, facts]] of saved.entries()) {
      if (i === 2) continue; // r3's newest state is the last line's
      const read = (await caches().load(file, revision, tree))!;
      expect([...read.entries.values()], revision).toEqual([...entries.values()]);
      expect(read.facts, revision).toEqual(facts.exact ? facts : NO_FACTS);
    }
    expect(await caches().load(file, 'r4', tree)).toBeNull();
    expect(await caches().load(file, 'r3', { dev: 1n, ino: 9n })).toBeNull();
    expect(errors).toEqual([]);
  });

  it('a torn last log line (a crash mid-append) ends the chain: its revision is not read, the one before still is', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    c.save(file, 'r1', tree, byPath([entry('a')]));
    await c.flush();
    c.save(file, 'r2', tree, byPath([entry('a', 2)]));
    await c.flush();
    c.save(file, 'r3', tree, byPath([entry('a', 3)]));
    await c.flush();
    const log = await readFile(statCacheLog(file), 'utf8');
    await writeFile(statCacheLog(file), log.slice(0, log.length - 20));
    expect(await caches().load(file, 'r3', tree)).toBeNull();
    expect([...(await caches().load(file, 'r2', tree))!.entries.values()]).toEqual([entry('a', 2)]);
    // A line that does not follow from the revision reached ends it too.
    await writeFile(statCacheLog(file), log.split('\n')[1]! + '\n');
    expect(await caches().load(file, 'r3', tree)).toBeNull();
    expect(await caches().load(file, 'r1', tree)).not.toBeNull();
  });

  it('a log that would outgrow half its snapshot is replaced by a new snapshot; a restored tree starts one too', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    const sizes = (turn: number, changed: number) => byPath(Array.from({ length: 20_000 }, (_, i) => entry(`d/${i}`, i < changed ? turn : 1)));
    c.save(file, 'r1', tree, sizes(1, 0));
    await c.flush();
    const snapshot = (await stat(file)).size;
    // A fifth of the entries changed: a log line of about a fifth of the snapshot.
    c.save(file, 'r2', tree, sizes(2, 4_000));
    await c.flush();
    expect(JSON.parse(await readFile(file, 'utf8')).revision).toBe('r1');
    expect((await stat(statCacheLog(file))).size).toBeLessThan(snapshot / 2);
    c.save(file, 'r3', tree, sizes(3, 4_000));
    await c.flush();
    c.save(file, 'r4', tree, sizes(4, 4_000));
    await c.flush();
    // r4's line would have taken the log past half the snapshot: r4 is the snapshot, the log is gone.
    expect(JSON.parse(await readFile(file, 'utf8')).revision).toBe('r4');
    await expect(stat(statCacheLog(file))).rejects.toMatchObject({ code: 'ENOENT' });
    expect([...(await caches().load(file, 'r4', tree))!.entries.values()]).toEqual([...sizes(4, 4_000).values()]);
    // A snapshot removed (or a log cut) behind this process's back: the next write is a snapshot again.
    await rm(file);
    c.save(file, 'r5', tree, sizes(5, 10));
    await c.flush();
    expect(JSON.parse(await readFile(file, 'utf8')).revision).toBe('r5');
    c.save(file, 'r6', tree, sizes(6, 10));
    await c.flush();
    await writeFile(statCacheLog(file), '');
    c.save(file, 'r7', tree, sizes(7, 10));
    await c.flush();
    expect(JSON.parse(await readFile(file, 'utf8')).revision).toBe('r7');
    // Another tree at the same file (a restore made a new root): a snapshot, not a line after the old tree's.
    c.save(file, 'r8', { dev: 1n, ino: 9n }, byPath([entry('a')]));
    await c.flush();
    expect(JSON.parse(await readFile(file, 'utf8')).revision).toBe('r8');
    expect(errors).toEqual([]);
  });

  it('writes a cache of more rows than one write holds, exactly', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    const many = Array.from({ length: 10_000 }, (_, i) => entry(`d/${i}`, i));
    c.save(file, 'r1', tree, byPath(many));
    await c.flush();
    expect([...(await caches().load(file, 'r1', tree))!.entries.values()]).toEqual(many);
  });

  it('keeps the facts of the walk that wrote a cache, in memory and in its file', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    const facts = { exact: true, fullWalkAt: 1_796_000_000_000, dirs: new Map([['a', '2049:77'], ['a/b', '2049:78']]), changedAfterNs: 1_796_000_000_987_654_321n, exactLine: true };
    c.save(file, 'r1', tree, byPath([entry('a/f')]), facts);
    expect((await c.load(file, 'r1', tree))!.facts).toEqual(facts);
    await c.flush();
    expect((await caches().load(file, 'r1', tree))!.facts).toEqual(facts);
  });

  it('a cache with no directories (written before they were recorded) keeps its facts; a malformed directory row drops them', async () => {
    const file = path.join(dir, 'stat-cache.json');
    const c = caches();
    c.save(file, 'r1', tree, byPath([entry('a/f')]), { exact: true, fullWalkAt: 1_796_000_000_000, dirs: new Map([['a', '1:2']]), changedAfterNs: 1_796_000_000_000_000_000n, exactLine: true });
    await c.flush();
    const body = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...body, dirs: undefined }));
    expect((await caches().load(file, 'r1', tree))!.facts).toEqual({ exact: true, fullWalkAt: 1_796_000_000_000, dirs: new Map(), changedAfterNs: 1_796_000_000_000_000_000n, exactLine: true });
    // A cache written before lines were recorded, or with a malformed one: the record's clock gives the line, never exact.
    for (const line of [undefined, 1_796_000_000, '-1', '1.5', 'x'.repeat(30)]) {
      await writeFile(file, JSON.stringify({ ...body, changedAfter: line }));
      const { facts } = (await caches().load(file, 'r1', tree))!;
      expect([facts.changedAfterNs, facts.exactLine], String(line)).toEqual([null, false]);
    }
    for (const bad of [[['a', '../1']], [['a']], 'a', [[1, '1:2']]]) {
      await writeFile(file, JSON.stringify({ ...body, dirs: bad }));
      const loaded = (await caches().load(file, 'r1', tree))!;
      expect(loaded.facts, JSON.stringify(bad)).toEqual(NO_FACTS);
      expect(loaded.entries.size).toBe(1);
    }
  });

  it('forgets the least recently used trees beyond its entry bound; their files still serve', async () => {
    const c = caches(4);
    const files = ['t1', 't2', 't3'].map((n) => path.join(dir, `${n}.json`));
    c.save(files[0]!, 'r', tree, byPath([entry('a'), entry('b')]));
    c.save(files[1]!, 'r', tree, byPath([entry('a'), entry('b')]));
    await c.load(files[0]!, 'r', tree); // t1 is now the most recent
    c.save(files[2]!, 'r', tree, byPath([entry('a'), entry('b')]));
    await c.flush();
    await Promise.all(files.map((f) => rm(f)));
    // t2 was forgotten (its file is gone too); t1 and t3 are kept.
    expect(await c.load(files[1]!, 'r', tree)).toBeNull();
    expect(await c.load(files[0]!, 'r', tree)).not.toBeNull();
    expect(await c.load(files[2]!, 'r', tree)).not.toBeNull();
  });

  it('reports a file it cannot write and never throws; the kept cache still serves', async () => {
    const file = path.join(dir, 'missing-dir', 'stat-cache.json');
    const c = caches();
    c.save(file, 'r1', tree, byPath([entry('a')]));
    await c.flush();
    expect(errors).toHaveLength(1);
    expect((errors[0] as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(await c.load(file, 'r1', tree)).not.toBeNull();
  });
});
