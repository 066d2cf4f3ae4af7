// The loss-window benchmark's judge: a restored tree is a state the agent really had, or it is mixed.
import { describe, expect, it } from 'vitest';
import { judgeRestored, type AgentOp } from '../../bench/lib/loss-judge.js';
import { lagMs } from '../../src/status/persist-lag.js';

const w = (seq: number, path: string): AgentOp => ({ seq, ts: 1_000 + seq, kind: 'write', path, content: `seq=${seq} ts=0 x\n` });
const log: AgentOp[] = [w(1, 'a'), w(2, 'b'), { seq: 3, ts: 1_003, kind: 'rename', path: 'a', to: 'c' }, { seq: 4, ts: 1_004, kind: 'delete', path: 'b' }, w(5, 'd')];
const baseline = { files: new Map<string, string>(), seq: 0, ts: 500 };
const tree = (entries: Record<string, number>) => new Map(Object.entries(entries).map(([p, seq]) => [p, `seq=${seq} ts=0 x\n`]));

describe('judgeRestored', () => {
  it('finds the newest state a tree equals, deletes and renames included', () => {
    expect(judgeRestored(tree({ a: 1, b: 2 }), baseline, log)).toMatchObject({ consistent: true, seq: 2, ts: 1_002, lostOps: 3 });
    expect(judgeRestored(tree({ c: 1 }), baseline, log)).toMatchObject({ consistent: true, seq: 4, lostOps: 1 });
    expect(judgeRestored(tree({ c: 1, d: 5 }), baseline, log)).toMatchObject({ consistent: true, seq: 5, lostOps: 0, lostBytes: 0 });
    expect(judgeRestored(new Map(), baseline, log)).toMatchObject({ consistent: true, seq: 0, ts: 500, lostOps: 5 });
  });

  it('calls a tree mixing two moments inconsistent', () => {
    // b was written after a, yet a is missing while b is there: no state had that.
    expect(judgeRestored(tree({ b: 2 }), baseline, log).consistent).toBe(false);
    // The rename both done (c) and not done (a).
    expect(judgeRestored(tree({ a: 1, c: 1, b: 2 }), baseline, log).consistent).toBe(false);
    expect(judgeRestored(new Map([['a', 'torn']]), baseline, log)).toMatchObject({ consistent: false, uploadOnlyResidue: 0, foreign: 'a' });
  });

  it('tells upload-only residue (a state plus files it had before) from a torn tree', () => {
    // After op 5 the tree is {c, d}; a checkpoint that kept a (renamed to c) and b (deleted).
    expect(judgeRestored(tree({ a: 1, b: 2, c: 1, d: 5 }), baseline, log)).toMatchObject({ consistent: false, uploadOnlyResidue: 2, seq: 5, lostOps: 0 });
    // d at a path it never had: torn.
    expect(judgeRestored(tree({ c: 1, e: 5 }), baseline, log)).toMatchObject({ consistent: false, uploadOnlyResidue: 0 });
  });
});

describe('lagMs', () => {
  it('counts from the start of the newest run (what the archive holds), else its completion, else publication', () => {
    expect(lagMs(10_000, 1_000, { completedAt: 9_000, capturedAt: 7_000 })).toBe(3_000);
    expect(lagMs(10_000, 1_000, { completedAt: 9_000, capturedAt: 0 })).toBe(1_000);
    expect(lagMs(10_000, 8_000, { completedAt: 0, capturedAt: 0 })).toBe(2_000);
  });
});
