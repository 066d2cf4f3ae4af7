// The backfill plan: the archive wins, type clashes are conflicts, nothing is planned twice.
import { describe, expect, it } from 'vitest';
import { encodePath } from '../../src/archive/tree-walk.js';
import { planBackfill } from '../../src/backfill/plan-backfill.js';
import type { LegacyFile } from '../../src/backfill/legacy-source.js';
import { createPacer } from '../../src/backfill/pacer.js';
import { pageOf } from '../../src/backfill/legacy-source.js';
import { cachedListing } from '../../src/backfill/cached-listing.js';

const file = (p: string): LegacyFile => ({ rel: Buffer.from(p), path: encodePath(Buffer.from(p)), size: 1, mode: 0o644, mtimeMs: 0 });
const paths = (files: readonly LegacyFile[]) => files.map((f) => f.path);

describe('planBackfill', () => {
  it('copies only paths the archive lacks', () => {
    const plan = planBackfill(
      [
        { p: 'a.txt', t: 'f' },
        { p: 'src', t: 'd' },
        { p: 'src/old.py', t: 'f' },
      ],
      [file('a.txt'), file('src/old.py'), file('src/new.py'), file('docs/readme.md')],
    );
    expect(paths(plan.copy)).toEqual(['docs/readme.md', 'src/new.py']);
    expect(paths(plan.archived)).toEqual(['a.txt', 'src/old.py']);
    expect(plan.conflicts).toEqual([]);
  });

  it('never writes through or over a non-directory of the archive', () => {
    const plan = planBackfill(
      [
        { p: 'link', t: 'l' },
        { p: 'file', t: 'f' },
        { p: 'dir', t: 'd' },
      ],
      [file('link/x'), file('file/y'), file('dir'), file('link')],
    );
    expect(plan.copy).toEqual([]);
    expect(paths(plan.archived)).toEqual([]);
    expect(plan.conflicts.map((c) => c.path).sort()).toEqual(['dir', 'file/y', 'link', 'link/x']);
  });

  it('keeps the shorter of two legacy paths that cannot both exist', () => {
    const plan = planBackfill([], [file('a/b'), file('a'), file('a/c/d')]);
    expect(paths(plan.copy)).toEqual(['a']);
    expect(plan.conflicts.map((c) => c.path)).toEqual(['a/b', 'a/c/d']);
  });
});

describe('sweep helpers', () => {
  it('pages sorted ids after a cursor', () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    expect(pageOf(ids, null, 2)).toEqual({ workspaceIds: ['a', 'b'], cursor: 'b', done: false, total: 5, position: 2 });
    expect(pageOf(ids, 'b', 2)).toEqual({ workspaceIds: ['c', 'd'], cursor: 'd', done: false, total: 5, position: 4 });
    expect(pageOf(ids, 'd', 2)).toEqual({ workspaceIds: ['e'], cursor: 'e', done: true, total: 5, position: 5 });
    // A cursor that is no longer listed (workspace removed) resumes after where it would sort.
    expect(pageOf(ids, 'bb', 10).workspaceIds).toEqual(['c', 'd', 'e']);
    expect(pageOf([], null, 10)).toEqual({ workspaceIds: [], cursor: null, done: true, total: 0, position: 0 });
  });

  it('paces starts at the given rate, shared between concurrent callers', () => {
    let now = 1_000;
    const pace = createPacer(4, () => now);
    expect([pace.reserve(), pace.reserve(), pace.reserve()]).toEqual([0, 250, 500]);
    now += 100;
    expect(pace.reserve()).toBe(650);
    // Idle time is not saved up: after a pause the next start is immediate, then paced again.
    now += 10_000;
    expect([pace.reserve(), pace.reserve()]).toEqual([0, 250]);
  });

  it('lists afresh for a first page and reuses a young listing for later pages', async () => {
    let now = 0;
    let loads = 0;
    const list = cachedListing(async () => [`w${++loads}`, 'a'], 10_000, () => now);
    expect(await list(true)).toEqual(['a', 'w1']);
    expect(await list(false)).toEqual(['a', 'w1']);
    expect(await list(true)).toEqual(['a', 'w2']);
    now = 10_001;
    expect(await list(false)).toEqual(['a', 'w3']);
  });
});
