import { describe, expect, it } from 'vitest';
import type { MirroredFile } from '../../src/providers/vercel/mirror-index.js';
import type { ListedEntry, Listing } from '../../src/providers/vercel/parse-listing.js';
import { COARSE_RACY_MARGIN_NS, nextIndex, planDelta, SANDBOX_RACY_MARGIN_NS, settled } from '../../src/providers/vercel/plan-delta.js';
import type { MirrorEntry, MirrorSurvey } from '../../src/providers/vercel/survey-mirror.js';
import { storedMtimeNs } from '../../src/tree/file-times.js';

const T = 1_700_000_000_123_456_789n;

function entry(key: string, extra: Partial<ListedEntry> = {}): ListedEntry {
  return { rel: Buffer.from(key, 'latin1'), key, type: 'file', size: 3, mode: 0o644, mtimeNs: T, ctimeNs: T, ino: 10n, dev: 1n, ...extra };
}
const listing = (...entries: ListedEntry[]): Listing => ({ entries: new Map(entries.map((e) => [e.key, e])), skipped: { special: 0, overLimit: 0, inconsistent: 0 }, truncated: false });
const known = (e: ListedEntry): MirroredFile => ({ listed: e, mirrorIno: 77n, mirrorCtimeNs: 5n });
const copy = (e: ListedEntry, extra: Partial<MirrorEntry> = {}): MirrorEntry => ({ type: 'file', mode: e.mode, size: e.size, mtimeNs: storedMtimeNs(e.mtimeNs), ctimeNs: 5n, ino: 77n, ...extra });
const survey = (entries: Record<string, MirrorEntry>): MirrorSurvey => ({ entries: new Map(Object.entries(entries)), removed: 0 });

describe('planDelta', () => {
  it('keeps a file only when the sandbox lists the indexed version and the mirror copy is the one the fleet wrote', () => {
    const same = entry('same');
    const rewritten = entry('rewritten', { ctimeNs: T + 1n });
    const touched = entry('touched');
    const fresh = entry('fresh');
    const huge = entry('huge', { size: 10_000 });
    const index = new Map([same, rewritten, touched].map((e) => [e.key, known(e.key === 'rewritten' ? entry('rewritten') : e)]));
    const mirror = survey({ same: copy(same), rewritten: copy(rewritten), touched: copy(touched, { ctimeNs: 6n }) });
    const plan = planDelta(listing(same, rewritten, touched, fresh, huge), index, mirror, 1_000);
    expect([...plan.kept.keys()]).toEqual(['same']);
    expect([...plan.fetch.keys()]).toEqual(['rewritten', 'touched', 'fresh']);
    expect([...plan.refused.keys()]).toEqual(['huge']);
    // Without an index (another boot, another sandbox) everything is fetched.
    expect(planDelta(listing(same), null, mirror, 1_000).fetch.size).toBe(1);
  });

  it('records written files unless racily clean; keeps a known previous version; marks unknown copies for removal', () => {
    const written = entry('written');
    const racy = entry('racy', { ctimeNs: T + 1_000n });
    const failedKnown = entry('failed-known', { ctimeNs: T + 2n });
    const failedUnknown = entry('failed-unknown');
    const index = new Map([[failedKnown.key, known(entry('failed-known'))]]);
    const mirror = survey({ 'failed-known': copy(entry('failed-known')), 'failed-unknown': copy(failedUnknown) });
    const all = listing(written, racy, failedKnown, failedUnknown);
    const plan = planDelta(all, index, mirror, 1_000);
    const clock = T + SANDBOX_RACY_MARGIN_NS + 500n;
    const next = nextIndex(all, index, mirror, plan, new Map([['written', { ino: 1n, ctimeNs: 2n }], ['racy', { ino: 3n, ctimeNs: 4n }]]), clock);
    expect([...next.index.keys()].sort()).toEqual(['failed-known', 'written']);
    expect(next.index.get('failed-known')).toBe(index.get('failed-known'));
    expect(next.untrusted).toEqual(['failed-unknown']);
    expect(next.racy).toBe(1);
  });
});

describe('settled', () => {
  it('needs the margin between a ctime and the clock before the archive, two seconds for whole-second times', () => {
    expect(settled(T, T + SANDBOX_RACY_MARGIN_NS + 1n)).toBe(true);
    expect(settled(T, T + SANDBOX_RACY_MARGIN_NS)).toBe(false);
    const whole = 1_700_000_000_000_000_000n;
    expect(settled(whole, whole + SANDBOX_RACY_MARGIN_NS + 1n)).toBe(false);
    expect(settled(whole, whole + COARSE_RACY_MARGIN_NS + 1n)).toBe(true);
  });
});
