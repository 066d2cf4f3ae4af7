import { describe, expect, it } from 'vitest';
import { QuotaExceededError } from '../../src/errors/quota-exceeded-error.js';
import { overQuota } from '../../src/state/quota-store.js';
import { checkQuota, writeDelta } from '../../src/workspace-io/quota-check.js';

describe('quota rule of an API write', () => {
  const limits = { bytes: 1_000, files: 3 };

  it('refuses a write that grows bytes or files past a limit, naming the quantity and the limit', () => {
    expect(() => checkQuota('ws', limits, { bytes: 900, files: 1 }, writeDelta(null, 200))).toThrow(QuotaExceededError);
    expect(() => checkQuota('ws', limits, { bytes: 900, files: 1 }, writeDelta(null, 200))).toThrow(/1100 bytes, above its quota of 1000/);
    expect(() => checkQuota('ws', limits, { bytes: 10, files: 3 }, writeDelta(null, 1))).toThrow(/4 files, above its quota of 3/);
  });

  it('lets a write pass that stays within, replaces a file in place, or shrinks a workspace already over', () => {
    expect(() => checkQuota('ws', limits, { bytes: 800, files: 2 }, writeDelta(null, 200))).not.toThrow();
    expect(() => checkQuota('ws', limits, { bytes: 5_000, files: 9 }, writeDelta(4_000, 10))).not.toThrow();
    expect(() => checkQuota('ws', limits, { bytes: 999, files: 3 }, writeDelta(100, 100))).not.toThrow();
    expect(() => checkQuota('ws', limits, null, writeDelta(null, 1_000))).not.toThrow();
  });

  it('a limit of 0 is none', () => {
    expect(() => checkQuota('ws', { bytes: 0, files: 0 }, { bytes: 1e12, files: 1e9 }, writeDelta(null, 1e9))).not.toThrow();
    expect(overQuota({ bytes: 0, files: 0 }, { bytes: 1e12, files: 1e9 })).toBe(false);
    expect(overQuota(limits, { bytes: 1_001, files: 0 })).toBe(true);
    expect(overQuota(limits, { bytes: 0, files: 4 })).toBe(true);
    expect(overQuota(limits, { bytes: 1_000, files: 3 })).toBe(false);
  });
});
