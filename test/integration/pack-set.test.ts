// A store's packs as a process knows them (pack-set.ts), on a real directory: a pack another
// process adds is found by a reader that misses (not by a writer's lookup, which does no I/O);
// a listing is trusted only once the directory's mtime is old enough (a pack renamed in within
// the same clock tick is not lost); a damaged or symlinked index is reported, its objects absent,
// the others found.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writePackSync } from '../../src/archive/pack-file.js';
import { PackSet, RACY_NS } from '../../src/archive/pack-set.js';

let root: string;
let packs: string;
let tmp: string;
let n = 0;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'fleet-pack-set-'));
  packs = path.join(root, 'packs');
  tmp = path.join(root, 'tmp');
  mkdirSync(packs);
  mkdirSync(tmp);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

// A pack of `count` small objects, as another process would write it; the ids.
function addPack(count: number): string[] {
  const contents = Array.from({ length: count }, () => {
    const bytes = Buffer.from(`object ${n++}`);
    return { id: createHash('sha256').update(bytes).digest('hex'), bytes };
  });
  writePackSync(packs, path.join(tmp, `w-${n}`), contents);
  return contents.map((c) => c.id);
}

const farFuture = () => BigInt(Date.now() + 3_600_000) * 1_000_000n;

describe('PackSet', () => {
  it('a reader that misses finds a pack another process added since; a lookup without I/O does not', () => {
    const first = addPack(5);
    const set = new PackSet(packs, farFuture);
    expect(set.findOrRefresh(first[0]!)).toBeDefined();
    const later = addPack(3);
    expect(set.find(later[1]!)).toBeUndefined();
    expect(set.findOrRefresh(later[1]!)).toBeDefined();
    expect(set.packs).toBe(2);
    // Nothing changed: a miss does not list again.
    expect(set.refresh()).toBe(false);
    expect(set.findOrRefresh(createHash('sha256').update('never').digest('hex'))).toBeUndefined();
  });

  it('trusts a listing only once the directory is older than RACY_NS: a pack renamed in within the same tick is found', () => {
    addPack(2);
    // The directory's mtime, set to a stamp that utimes can set again.
    const stamp = new Date(Date.now() - 10_000);
    utimesSync(packs, stamp, stamp);
    const mtime = statSync(packs, { bigint: true }).mtimeNs;
    const trusting = new PackSet(packs, () => mtime + RACY_NS);
    const racy = new PackSet(packs, () => mtime + RACY_NS - 1n);
    expect(trusting.refresh()).toBe(true);
    expect(racy.refresh()).toBe(true);
    // A pack renamed in that leaves the directory's mtime as the listings saw it (a coarse clock).
    const hidden = addPack(2);
    utimesSync(packs, stamp, stamp);
    expect(statSync(packs, { bigint: true }).mtimeNs).toBe(mtime);
    expect(trusting.findOrRefresh(hidden[0]!)).toBeUndefined();
    expect(racy.findOrRefresh(hidden[0]!)).toBeDefined();
  });

  it('reports a damaged or symlinked index and goes on: its objects are absent, the others found', () => {
    const good = addPack(4);
    const damaged = `${'a'.repeat(64)}.idx`;
    writeFileSync(path.join(packs, damaged), 'not an index at all, but long enough to be read as one.......');
    const linked = `${'b'.repeat(64)}.idx`;
    symlinkSync('/etc/passwd', path.join(packs, linked));
    writeFileSync(path.join(packs, 'README'), 'ignored');
    const set = new PackSet(packs, farFuture);
    expect(set.findOrRefresh(good[3]!)).toBeDefined();
    expect([...set.problems.keys()].sort()).toEqual([damaged, linked]);
    expect(set.problems.get(damaged)).toMatch(/magic/);
    expect(set.problems.get(linked)).toMatch(/ELOOP/);
    expect(set.packs).toBe(1);
  });

  it('a store without packs has none', () => {
    rmSync(packs, { recursive: true });
    const set = new PackSet(packs);
    expect(set.refresh()).toBe(false);
    expect(set.findOrRefresh(createHash('sha256').update('x').digest('hex'))).toBeUndefined();
  });
});
