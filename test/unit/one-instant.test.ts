// When a sandbox listing is the tree at one instant (providers/vercel/one-instant.ts): every
// listed ctime and every directory looked at again older than the clock less the margin.
import { describe, expect, it } from 'vitest';
import { listedAtOneInstant } from '../../src/providers/vercel/one-instant.js';
import { COARSE_RACY_MARGIN_NS, SANDBOX_RACY_MARGIN_NS } from '../../src/providers/vercel/plan-delta.js';
import type { ListedEntry, Listing } from '../../src/tree/listing.js';

const CLOCK = 1_700_000_100_000_000_000n;
const entry = (key: string, ctimeNs: bigint): ListedEntry => ({ rel: Buffer.from(key), key, type: 'file', size: 1, mode: 0o644, mtimeNs: ctimeNs, ctimeNs, ino: 1n, dev: 1n });
const listing = (ctimes: bigint[], truncated = false): Listing => ({
  entries: new Map(ctimes.map((c, i) => [`f${i}`, entry(`f${i}`, c)])),
  skipped: { special: 0, overLimit: 0, inconsistent: 0 },
  truncated,
});
const still = { fine: false, coarse: false };

describe('listedAtOneInstant', () => {
  it('holds when every entry and every directory is older than the clock less the margin', () => {
    const old = CLOCK - SANDBOX_RACY_MARGIN_NS - 1n;
    expect(listedAtOneInstant(listing([old - 5_000_000_000n, old]), CLOCK, still)).toBe(true);
    expect(listedAtOneInstant(listing([]), CLOCK, still)).toBe(true);
  });

  it('fails for an entry changed at or after the clock less the margin, however slightly', () => {
    expect(listedAtOneInstant(listing([CLOCK - 10_000_000_000n, CLOCK - SANDBOX_RACY_MARGIN_NS]), CLOCK, still)).toBe(false);
    expect(listedAtOneInstant(listing([CLOCK + 1n]), CLOCK, still)).toBe(false);
  });

  it('fails when a directory moved after the walk began (a rename or delete leaves no listed entry behind)', () => {
    expect(listedAtOneInstant(listing([CLOCK - 10_000_000_000n]), CLOCK, { fine: true, coarse: true })).toBe(false);
  });

  it('judges a tree whose times have no sub-second part with the coarse margin and the coarse look at its directories', () => {
    const whole = (CLOCK / 1_000_000_000n - 1n) * 1_000_000_000n;
    // A second old: within the coarse margin, so not proof.
    expect(listedAtOneInstant(listing([whole]), CLOCK, still)).toBe(false);
    const older = whole - COARSE_RACY_MARGIN_NS;
    expect(listedAtOneInstant(listing([older]), CLOCK, still)).toBe(true);
    // Directories fine by the fine margin but not by the coarse one: not proof for such a tree.
    expect(listedAtOneInstant(listing([older]), CLOCK, { fine: false, coarse: true })).toBe(false);
  });

  it('fails for a cut-short listing', () => {
    expect(listedAtOneInstant(listing([CLOCK - 10_000_000_000n], true), CLOCK, still)).toBe(false);
  });
});
