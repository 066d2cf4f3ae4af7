// `fleet verify` on archive format 2 (a real bin/fleet.js process against the test Redis): the
// head's record gone, a tree gone, an object gone or rewritten are each named by workspace,
// revision, path and id, exit 1; `--read-data-subset` re-reads a rotating slice of the object id
// space (consecutive runs continue where the last stopped, so a rewritten object is found within
// 100 / P runs), and the scheduled `verify` GC kind takes the same slices and removes nothing.
// Run `npm run build` first. Harnesses pin FLEET_ARCHIVE_FORMAT=2.
import { chmod, rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { windowWidth, inWindow } from '../../src/archive/id-window.js';
import { lookupPath } from '../../src/archive/revision-reader.js';
import type { VerifyProblem } from '../../src/archive/verify-revisions.js';
import { runGc } from '../../src/gc/run-gc.js';
import { runFleet, cliJson } from '../helpers/processes.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

const FORMAT_2 = { FLEET_ARCHIVE_FORMAT: '2' };

interface VerifyJson {
  revisions: number;
  store: { trees: number; objects: number; objectsRead: number; bytesRead: number };
  readDataSubset: { percent: number; from: string; to: string } | null;
  problems: VerifyProblem[];
}

// A workspace with two attached revisions; returns them and the object id of `rel` in the head.
async function twoRevisions(h: Harness): Promise<{ first: string; second: string; objectOf: (rel: string) => Promise<string> }> {
  await h.provision('ws');
  await h.write('ws', { 'a.txt': 'one', 'dir/b.txt': 'two' });
  const first = (await h.persist('ws')).revision!;
  await h.write('ws', { 'c.txt': 'three' });
  const second = (await h.persist('ws')).revision!;
  const objectOf = async (rel: string) => {
    const record = (await h.services.archive.readRecord('ws', second))!;
    const node = await lookupPath(h.services.archive.objects, record.root, Buffer.from(rel));
    if (node?.type !== 'f') throw new Error(`${rel} is not a file of ${second}`);
    return node.object;
  };
  return { first, second, objectOf };
}

async function verify(h: Harness, args: string[]): Promise<{ code: number | null; json: VerifyJson }> {
  const result = await runFleet(['verify', ...args, '--json'], h.env);
  return { code: result.code, json: cliJson(result.stdout) as VerifyJson };
}

// Rewrites an object's bytes in place, keeping its size (damage only re-reading can see).
async function rewrite(h: Harness, id: string, bytes: string): Promise<void> {
  const file = h.services.archive.objects.objectPath(id);
  await chmod(file, 0o644);
  await writeFile(file, bytes);
}

describe('fleet verify, archive format 2', () => {
  it('a healthy archive exits 0 with every tree and object checked and re-read', async () => {
    const h = await createHarness(FORMAT_2);
    await twoRevisions(h);
    const result = await verify(h, ['ws']);
    expect(result.code).toBe(0);
    expect(result.json.problems).toEqual([]);
    expect(result.json.revisions).toBe(2);
    // a.txt, dir/b.txt, c.txt; the two roots and dir/ (shared).
    expect(result.json.store).toMatchObject({ objects: 3, objectsRead: 3, trees: 3 });
    expect(result.json.readDataSubset).toBeNull();
  });

  it("the head's record gone: record-missing, and current dangles", async () => {
    const h = await createHarness(FORMAT_2);
    const { second } = await twoRevisions(h);
    await rm(h.services.archive.paths('ws').record(second));
    const result = await verify(h, ['ws']);
    expect(result.code).toBe(1);
    expect(result.json.problems).toContainEqual(expect.objectContaining({ workspaceId: 'ws', revision: second, problem: 'record-missing' }));
    expect(result.json.problems).toContainEqual(expect.objectContaining({ workspaceId: 'ws', revision: second, problem: 'current-dangling' }));
  });

  it('a tree gone, an object gone, an object rewritten: each named by revision, path and id', async () => {
    const h = await createHarness(FORMAT_2);
    const { first, second, objectOf } = await twoRevisions(h);
    const record = (await h.services.archive.readRecord('ws', second))!;
    const dir = await lookupPath(h.services.archive.objects, record.root, Buffer.from('dir'));
    if (dir?.type !== 'd') throw new Error('dir is not a directory');
    const a = await objectOf('a.txt');
    const c = await objectOf('c.txt');
    await rm(h.services.archive.objects.treePath(dir.tree));
    await rm(h.services.archive.objects.objectPath(c));
    await rewrite(h, a, 'ONE');
    const result = await verify(h, ['ws']);
    expect(result.code).toBe(1);
    for (const revision of [first, second]) {
      expect(result.json.problems).toContainEqual(expect.objectContaining({ revision, problem: 'tree-missing', object: dir.tree, path: 'dir' }));
      expect(result.json.problems).toContainEqual(expect.objectContaining({ revision, problem: 'object-corrupt', object: a, path: 'a.txt' }));
    }
    expect(result.json.problems).toContainEqual(expect.objectContaining({ revision: second, problem: 'object-missing', object: c, path: 'c.txt' }));
  });

  it('--read-data-subset re-reads consecutive slices across runs: a rewritten object is found in exactly the run whose slice holds it', async () => {
    const h = await createHarness(FORMAT_2);
    const { objectOf } = await twoRevisions(h);
    const a = await objectOf('a.txt');
    await rewrite(h, a, 'ONE');
    const runs: VerifyJson[] = [];
    for (let i = 0; i < 4; i++) runs.push((await verify(h, ['ws', '--read-data-subset', '25%'])).json);
    // Each run continues where the previous one stopped; four quarters cover the whole id space once.
    expect(runs[0]!.readDataSubset).toMatchObject({ percent: 25, from: '00000000', to: '40000000' });
    for (let i = 1; i < 4; i++) expect(runs[i]!.readDataSubset!.from).toBe(runs[i - 1]!.readDataSubset!.to);
    expect(runs[3]!.readDataSubset!.to).toBe('00000000');
    const found = runs.map((run) => run.problems.some((p) => p.problem === 'object-corrupt' && p.object === a));
    expect(found.filter(Boolean)).toHaveLength(1);
    const slice = found.indexOf(true);
    expect(inWindow({ start: slice * windowWidth(25), width: windowWidth(25) }, a)).toBe(true);
    // Every object is still checked to exist in every run; only the slice's are re-read.
    expect(runs.reduce((n, run) => n + run.store.objectsRead, 0)).toBe(3);
    for (const run of runs) expect(run.store.objects).toBe(3);
  });

  it('the scheduled verify kind takes the next slice, reports problems as items, and removes nothing', async () => {
    const h = await createHarness({ ...FORMAT_2, FLEET_VERIFY_READ_DATA_PCT: '100' });
    const { second, objectOf } = await twoRevisions(h);
    const c = await objectOf('c.txt');
    await rm(h.services.archive.objects.objectPath(c));
    const result = await runGc(h.services, { kind: 'verify', dryRun: false, limit: 100 }, AbortSignal.timeout(60_000));
    expect(result.items).toContainEqual(expect.objectContaining({ id: c, workspaceId: 'ws' }));
    expect(result.report).toMatchObject({ readDataPct: 100, problems: 1, revisions: 2 });
    expect(await h.services.archive.readRecord('ws', second)).not.toBeNull();
    expect(await h.services.archive.objects.hasObject(await objectOf('a.txt'))).toBe(true);
  });
});
