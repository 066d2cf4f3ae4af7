// `fleet base list`'s view of the registry, without I/O: lanes with their active base, rollback
// target and candidates; per base its references and the time since it was rotated out.
import { describe, expect, it } from 'vitest';
import type { BaseEntry } from '../../src/state/base-registry.js';
import { baseViews, laneViews, shortDuration } from '../../src/status/base-lanes.js';

const entry = (over: Partial<BaseEntry> & Pick<BaseEntry, 'snapshotId'>): BaseEntry => ({
  provider: 'local',
  version: over.snapshotId,
  manifestHash: over.snapshotId,
  name: 'b',
  runtime: 'node22',
  lane: 'default',
  status: 'ready',
  active: false,
  previousSnapshotId: null,
  sourceSandboxId: null,
  error: null,
  createdAt: 0,
  readyAt: 0,
  testedAt: 0,
  rotatedAt: null,
  retiredAt: null,
  expiresAt: null,
  ...over,
});

describe('base lanes', () => {
  const entries = [
    entry({ snapshotId: 'd', active: true, previousSnapshotId: 'c' }),
    entry({ snapshotId: 'c' }),
    entry({ snapshotId: 'x', status: 'candidate', testedAt: null }),
    entry({ snapshotId: 'a', rotatedAt: 1_000 }),
    entry({ snapshotId: 'v', provider: 'vercel', lane: 'gpu', status: 'failed' }),
  ];

  it('groups by provider and lane: active, rollback target, candidates and counts by status', () => {
    expect(laneViews(entries)).toEqual([
      { provider: 'local', lane: 'default', active: 'd', previous: 'c', candidates: ['x'], counts: { ready: 3, candidate: 1 } },
      { provider: 'vercel', lane: 'gpu', active: null, previous: null, candidates: [], counts: { failed: 1 } },
    ]);
  });

  it('adds the reference count and the time since rotation to each base', () => {
    const views = baseViews(entries, new Map([['d', 3]]), 90_061_000);
    expect(views.map((v) => [v.snapshotId, v.references, v.sinceRotationMs])).toEqual([
      ['d', 3, null],
      ['c', 0, null],
      ['x', 0, null],
      ['a', 0, 90_060_000],
      ['v', 0, null],
    ]);
    expect(shortDuration(90_060_000)).toBe('1d 1h');
    expect(shortDuration(3_720_000)).toBe('1h 2m');
    expect(shortDuration(61_000)).toBe('1m 1s');
    expect(shortDuration(999)).toBe('0s');
  });
});
