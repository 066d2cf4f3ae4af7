// How long a persist waits before reading a file whose last change may still be a write(2)
// copying into it: until its ctime is WRITE_STALL_NS old, never more than that for one file
// (a clock stepped back), and never more than the walk's budget in all.
import type { BigIntStats } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stallWaitMs, WRITE_STALL_NS } from '../../src/archive/store-open-file.js';
import { WriteWaits } from '../../src/archive/write-waits.js';

const changedAt = (ctimeNs: bigint, mtimeNs = 0n) => ({ ctimeNs, mtimeNs }) as BigIntStats;
const NOW = 1_796_000_000_000_000_000n;

describe('stallWaitMs', () => {
  it('reads a file at once when its last change is old enough, whatever its mtime says', () => {
    expect(stallWaitMs(changedAt(NOW - WRITE_STALL_NS), NOW)).toBe(0);
    expect(stallWaitMs(changedAt(NOW - 5_000_000_000n), NOW)).toBe(0);
    // An mtime set into the future (utimensat) is the sandbox's to choose; the ctime is not.
    expect(stallWaitMs(changedAt(NOW - 5_000_000_000n, NOW + 3_600_000_000_000n), NOW)).toBe(0);
  });

  it('waits out the rest of the stall time for a file changed just now', () => {
    expect(stallWaitMs(changedAt(NOW - 30_000_000n), NOW)).toBe(70);
    expect(stallWaitMs(changedAt(NOW), NOW)).toBe(100);
    expect(stallWaitMs(changedAt(NOW - 99_999_999n), NOW)).toBe(1);
  });

  it('never waits longer than the stall time (a ctime ahead of a clock that was stepped back)', () => {
    expect(stallWaitMs(changedAt(NOW + 3_600_000_000_000n), NOW)).toBe(100);
  });
});

describe('WriteWaits', () => {
  it('grants waits until the budget is spent, then answers false at once', async () => {
    let clock = 0;
    const waits = new WriteWaits(undefined, 25, () => clock);
    expect(await waits.wait(10)).toBe(true);
    clock += 10;
    expect(waits.left).toBe(15);
    expect(await waits.wait(40)).toBe(true);
    clock += 15;
    expect(waits.waitedMs).toBe(25);
    expect(waits.left).toBe(0);
    expect(await waits.wait(5)).toBe(false);
    expect(await waits.wait(0)).toBe(false);
    expect(waits.waitedMs).toBe(25);
  });

  it('waits that overlap cost the wall time they cover together (files streamed at once)', async () => {
    let clock = 1_000;
    const waits = new WriteWaits(undefined, 150, () => clock);
    // Sixteen files at once, each waiting up to 100 ms from about the same moment: 100 ms in all.
    const all = [];
    for (let i = 0; i < 16; i++) {
      all.push(waits.wait(100 - i));
    }
    expect(await Promise.all(all)).toEqual(Array(16).fill(true));
    expect(waits.waitedMs).toBe(100);
    clock += 100;
    // Later, a wait reaching past the budget is cut to what is left.
    expect(await waits.wait(100)).toBe(true);
    expect(waits.waitedMs).toBe(150);
    expect(waits.left).toBe(0);
  });

  it('an aborted walk stops at the end of the wait under way, and waits no more', async () => {
    const stop = new AbortController();
    const waits = new WriteWaits(stop.signal, 60_000);
    const waiting = waits.wait(20);
    stop.abort();
    await expect(waiting).rejects.toThrow(/abort/i);
    await expect(waits.wait(20)).rejects.toThrow(/abort/i);
  });
});
