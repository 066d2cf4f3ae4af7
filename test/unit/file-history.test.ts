// The history of one path along the revision records' parent chain, over records and trees in
// memory (no Redis, no disk): added, changed, deleted and re-added; equal roots skipped; the
// limit; a parent no longer kept or in format 1 ends the walk with truncated; a format 1 head is
// 501; a path below a file is absent.
import { describe, expect, it } from 'vitest';
import type { RevisionRecord } from '../../src/archive/revision-record.js';
import { fileHistory } from '../../src/workspace-io/file-history.js';
import { memoryTrees, type TreeSpec } from '../helpers/memory-trees.js';

const rev = (i: number) => `r20261201T1000000${String(i).padStart(2, '0')}Z-g1-abcde${i}`;

// A workspace whose revisions 1..n have the given trees, each the parent of the next.
function workspace(specs: readonly TreeSpec[], { missing = [] as number[], format1 = [] as number[], head = specs.length } = {}) {
  const trees = memoryTrees();
  const records = new Map<string, RevisionRecord>();
  specs.forEach((spec, index) => {
    const i = index + 1;
    if (missing.includes(i) || format1.includes(i)) return;
    records.set(rev(i), {
      format: 2,
      workspaceId: 'ws',
      revision: rev(i),
      generation: 1,
      reason: `step-${i}`,
      turnId: null,
      parent: i === 1 ? null : rev(i - 1),
      mode: 'reconcile',
      createdAt: new Date(Date.UTC(2026, 11, 1, 10, 0, i)).toISOString(),
      scanStartedAt: '0',
      root: trees.put(spec),
      files: 0,
      bytes: 0,
      entries: 0,
    });
  });
  const deps = {
    archive: {
      current: async (): Promise<string | null> => rev(head),
      readRecord: async (_ws: string, revision: string) => records.get(revision) ?? null,
      formatOf: async (_ws: string, revision: string) => (format1.some((i) => rev(i) === revision) ? (1 as const) : records.has(revision) ? (2 as const) : null),
      objects: trees.store,
    },
    checkpoints: { current: async () => null },
  };
  return { deps, trees };
}

const history = (deps: ReturnType<typeof workspace>['deps'], path: string, limit = 100) => fileHistory(deps, { workspaceId: 'ws', path, parts: path.split('/'), limit });
const steps = (rows: readonly { revision: string; change: string }[]) => rows.map((r) => `${r.revision.slice(-1)}:${r.change}`);

// 1 other only, 2 adds notes/plan.md, 3 unrelated, 4 changes it, 5 deletes it, 6 adds it again.
const SIX: TreeSpec[] = [
  { other: '0' },
  { other: '0', notes: { 'plan.md': 'v1' } },
  { other: '1', notes: { 'plan.md': 'v1' } },
  { other: '1', notes: { 'plan.md': 'v2!' } },
  { other: '1', notes: {} },
  { other: '1', notes: { 'plan.md': 'v3 again' } },
];

describe('fileHistory', () => {
  it('lists the revisions that added, changed, deleted and re-added a path, newest first, with what it is there', async () => {
    const { deps } = workspace(SIX);
    const found = await history(deps, 'notes/plan.md');
    expect(steps(found.revisions)).toEqual(['6:added', '5:deleted', '4:changed', '2:added']);
    expect(found.truncated).toBe(false);
    expect(found.revisions[0]).toEqual({ revision: rev(6), createdAt: '2026-12-01T10:00:06.000Z', generation: 1, reason: 'step-6', change: 'added', type: 'file', size: 8, mode: 0o644, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(found.revisions[1]).toEqual({ revision: rev(5), createdAt: '2026-12-01T10:00:05.000Z', generation: 1, reason: 'step-5', change: 'deleted' });
  });

  it('skips a revision whose root equals its parent\'s without looking the path up', async () => {
    const { deps, trees } = workspace([{ a: '1' }, { a: '1' }, { a: '1' }, { a: '2' }]);
    const found = await history(deps, 'a');
    expect(steps(found.revisions)).toEqual(['4:changed', '1:added']);
    // One lookup per distinct root: the head's and its parent's (revisions 1-3 share one).
    expect(trees.reads).toHaveLength(2);
  });

  it('stops at the limit, truncated only when an older change exists', async () => {
    const { deps } = workspace(SIX);
    const cut = await history(deps, 'notes/plan.md', 2);
    expect(steps(cut.revisions)).toEqual(['6:added', '5:deleted']);
    expect(cut.truncated).toBe(true);
    // The first revision's addition counts against the limit too.
    const first = await history(workspace([{ a: '1' }, { a: '2' }]).deps, 'a', 1);
    expect(steps(first.revisions)).toEqual(['2:changed']);
    expect(first.truncated).toBe(true);
    const exact = await history(deps, 'notes/plan.md', 4);
    expect(exact.revisions).toHaveLength(4);
    expect(exact.truncated).toBe(false);
  });

  it('a parent no longer kept, or in format 1, ends the walk: the change it would tell is not listed, and truncated says so', async () => {
    const pruned = await history(workspace(SIX, { missing: [3] }).deps, 'notes/plan.md');
    expect(steps(pruned.revisions)).toEqual(['6:added', '5:deleted']);
    expect(pruned.truncated).toBe(true);
    const migrating = await history(workspace(SIX, { format1: [4] }).deps, 'notes/plan.md');
    expect(steps(migrating.revisions)).toEqual(['6:added']);
    expect(migrating.truncated).toBe(true);
  });

  it('a format 1 head is 501 naming fleet archive migrate; no revision yet is an empty history; an unknown head is 404', async () => {
    await expect(history(workspace(SIX, { format1: [6] }).deps, 'notes/plan.md')).rejects.toMatchObject({ code: 'NotImplemented', message: expect.stringContaining('fleet archive migrate') });
    const none = workspace([]).deps;
    expect(await history({ ...none, archive: { ...none.archive, current: async () => null } }, 'a')).toEqual({ workspaceId: 'ws', path: 'a', revisions: [], truncated: false });
    await expect(history(workspace(SIX, { missing: [6] }).deps, 'a')).rejects.toMatchObject({ code: 'RevisionNotFound' });
  });

  it('a path below a file is absent; a directory changes with its entries', async () => {
    const { deps } = workspace([{ a: 'file' }, { a: { b: 'x' } }, { a: { b: 'y' } }]);
    expect(steps((await history(deps, 'a/b')).revisions)).toEqual(['3:changed', '2:added']);
    expect((await history(deps, 'a')).revisions.map((r) => `${r.change}:${r.type}`)).toEqual(['changed:dir', 'changed:dir', 'added:file']);
  });
});
