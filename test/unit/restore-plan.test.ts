import { describe, expect, it } from 'vitest';
import { planRestore, type RestoreFacts } from '../../src/provision/restore-plan.js';
import { probeDeadlineMs } from '../../src/provision/provision-workspace.js';

const none: RestoreFacts = { live: null, revision: null, nativeSnapshot: null, hadState: false, base: null };
const base = { snapshotId: 'snap-1', version: 'node-abc' };

describe('planRestore (DESIGN.md restore priority)', () => {
  it('1. reuses a confirmed live incarnation before anything else', () => {
    expect(planRestore({ ...none, live: { state: 'running', ready: true }, revision: 'r', base, hadState: true }).outcome).toBe('reused');
  });
  it('2. resumes a stopped incarnation', () => {
    expect(planRestore({ ...none, live: { state: 'stopped', ready: true }, revision: 'r' }).outcome).toBe('resumed');
  });
  it('does not reuse an incarnation without a ready marker', () => {
    expect(planRestore({ ...none, live: { state: 'running', ready: false }, revision: 'r1', hadState: true })).toEqual({ outcome: 'restored', source: 'r1' });
  });
  it('3. restores the attached revision before a native snapshot', () => {
    expect(planRestore({ ...none, revision: 'r1', nativeSnapshot: 'snap-w', hadState: true })).toEqual({ outcome: 'restored', source: 'r1' });
  });
  it('4. restores a provider-native snapshot without a revision', () => {
    expect(planRestore({ ...none, nativeSnapshot: 'snap-w', hadState: true })).toEqual({ outcome: 'restored-native', source: 'snap-w' });
  });
  it('5. seeds a workspace that never had state from the active base, else empty', () => {
    expect(planRestore({ ...none, base })).toEqual({ outcome: 'created-from-base', source: 'snap-1', baseVersion: 'node-abc' });
    expect(planRestore(none)).toEqual({ outcome: 'created-empty', source: null });
  });
  it('6. a known workspace with nothing to restore is a conflict, never the base', () => {
    expect(planRestore({ ...none, hadState: true, base }).outcome).toBe('conflict');
  });
});

describe('probeDeadlineMs', () => {
  it('grows with the attempt and is capped', () => {
    expect([1, 2, 3, 4].map(probeDeadlineMs)).toEqual([2_000, 4_000, 8_000, 16_000]);
    expect(probeDeadlineMs(20)).toBe(60_000);
  });
});
