// The line a walk draws (archive/change-stamp.ts), against this kernel and filesystem: exact only
// from a marker on the tree's own device, never following a symlink put in the marker's place,
// and every change made after it stamped at or after it.
import { closeSync, fstatSync, lstatSync, mkdtempSync, openSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RACY_MARGIN_NS, stampChangeLine } from '../../src/archive/change-stamp.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'change-stamp-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const nowNs = () => BigInt(Date.now()) * 1_000_000n;

describe('stampChangeLine', () => {
  it('takes the ctime the filesystem gives the marker when it is on the tree\'s device', () => {
    const dev = statSync(dir, { bigint: true }).dev;
    const before = nowNs();
    const line = stampChangeLine(path.join(dir, 'stat-cache.json.line'), dev);
    expect(line).toBe(statSync(path.join(dir, 'stat-cache.json.line'), { bigint: true }).ctimeNs);
    // The filesystem's now: within a tick of the host's (far closer than the margin it replaces).
    expect(line).toBeGreaterThan(before - RACY_MARGIN_NS / 10n);
    expect(line).toBeLessThanOrEqual(nowNs() + 1_000_000n);
  });

  it('every change made after the line is stamped at or after it: 2,000 same-size rewrites, each right after a line', () => {
    const dev = statSync(dir, { bigint: true }).dev;
    const marker = path.join(dir, 'marker');
    const file = path.join(dir, 'f.txt');
    writeFileSync(file, 'v0000');
    const fd = openSync(file, 'r+');
    try {
      for (let i = 1; i <= 2_000; i++) {
        const line = stampChangeLine(marker, dev);
        expect(line).not.toBeNull();
        writeSync(fd, `v${String(i).padStart(4, '0')}`, 0);
        const { ctimeNs } = fstatSync(fd, { bigint: true });
        expect(ctimeNs, `rewrite ${i}`).toBeGreaterThanOrEqual(line!);
      }
    } finally {
      closeSync(fd);
    }
  });

  it('gives no stamp for another device, no marker or one that cannot be made (the caller draws the clock\'s line)', () => {
    const dev = statSync(dir, { bigint: true }).dev;
    for (const [what, marker, treeDev] of [
      ['another device', path.join(dir, 'marker'), dev + 1n],
      ['no marker', null, dev],
      ['a marker in a missing directory', path.join(dir, 'gone', 'marker'), dev],
    ] as const) {
      expect(stampChangeLine(marker, treeDev), what).toBeNull();
    }
  });

  it('never follows a symlink put in the marker\'s place, nor touches what it names', () => {
    const dev = statSync(dir, { bigint: true }).dev;
    const target = path.join(dir, 'precious');
    writeFileSync(target, 'keep');
    utimesSync(target, 1_600_000_000, 1_600_000_000);
    const was = statSync(target, { bigint: true });
    const marker = path.join(dir, 'marker');
    symlinkSync(target, marker);
    expect(stampChangeLine(marker, dev)).toBeNull();
    const now = statSync(target, { bigint: true });
    expect([now.mtimeNs, now.ctimeNs]).toEqual([was.mtimeNs, was.ctimeNs]);
    expect(lstatSync(marker).isSymbolicLink()).toBe(true);
    expect(readlinkSync(marker)).toBe(target);
  });
});
