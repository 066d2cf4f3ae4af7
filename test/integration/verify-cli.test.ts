// `fleet verify` (a real bin/fleet.js process against the test Redis) checks every attached
// checkpoint record and `current` against the archive: each kind of damage exits 1 and names
// workspace, revision and problem; a healthy archive exits 0. Run `npm run build` first.
// Tests that damage format 1's revision directories and manifests pin FLEET_ARCHIVE_FORMAT=1;
// format 2's records, trees and objects are damaged in verify-format2-cli.test.ts.
import { readFile, rm, symlink, rename, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { VerifyProblem } from '../../src/archive/verify-revisions.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';
import { runFleet, cliJson } from '../helpers/processes.js';

/** The harness of a test that damages format 1's on-disk layout. */
const FORMAT_1 = { FLEET_ARCHIVE_FORMAT: '1' };

interface VerifyJson {
  revisions: number;
  mismatched: number;
  checks: { workspaceId: string; revision: string; ok: boolean }[];
  attached: number;
  problems: VerifyProblem[];
}

// A workspace with two attached revisions (`first`, then the head `second`).
async function twoRevisions(h: Harness, ws = 'ws'): Promise<{ first: string; second: string }> {
  await h.provision(ws);
  await h.write(ws, { 'a.txt': 'one', 'dir/b.txt': 'two' });
  const first = (await h.persist(ws)).revision!;
  await h.write(ws, { 'c.txt': 'three' });
  const second = (await h.persist(ws)).revision!;
  return { first, second };
}

// Runs `fleet verify <args> --json` and its human form; returns the exit code, the JSON and the text.
async function verify(h: Harness, args: string[]): Promise<{ code: number | null; json: VerifyJson; text: string }> {
  const machine = await runFleet(['verify', ...args, '--json'], h.env);
  const human = await runFleet(['verify', ...args], h.env);
  expect(human.code, human.stderr).toBe(machine.code);
  return { code: machine.code, json: cliJson(machine.stdout) as VerifyJson, text: human.stdout };
}

// Expects exit 1 and a problem line naming workspace, revision and problem (in JSON and in text).
function expectProblem(result: Awaited<ReturnType<typeof verify>>, workspaceId: string, revision: string | null, problem: string): void {
  expect(result.code).toBe(1);
  expect(result.json.problems).toContainEqual(expect.objectContaining({ workspaceId, revision, problem }));
  const line = result.text.split('\n').find((l) => l.includes(problem) && l.startsWith(workspaceId));
  expect(line, result.text).toBeDefined();
  if (revision) expect(line).toContain(revision);
}

describe('fleet verify', () => {
  it('a healthy archive exits 0: every attached record checked, every revision re-hashed, in the existing JSON shape', async () => {
    const h = await createHarness();
    const { first, second } = await twoRevisions(h);
    await twoRevisions(h, 'other');
    const result = await verify(h, ['ws', 'other']);
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ revisions: 4, mismatched: 0, attached: 4, problems: [] });
    expect(result.json.checks.filter((c) => c.workspaceId === 'ws').map((c) => c.revision).sort()).toEqual([first, second].sort());
    expect(result.text).toContain('4 revision(s) checked, 0 with mismatches; 4 attached record(s) checked against the archive, 0 problem(s)');
    const all = await verify(h, ['--all', '--sample', '0.5']);
    expect(all.code).toBe(0);
    expect(all.json.attached).toBe(4);
  });

  it("the head's revision directory deleted: directory-missing, and current dangles", async () => {
    const h = await createHarness(FORMAT_1);
    const { second } = await twoRevisions(h);
    await rm(h.services.archive.paths('ws').revision(second), { recursive: true });
    const result = await verify(h, ['ws']);
    expectProblem(result, 'ws', second, 'directory-missing');
    expectProblem(result, 'ws', second, 'current-dangling');
    expect(result.text).toContain('the attached head');
  });

  it("the head's manifest deleted: manifest-missing", async () => {
    const h = await createHarness(FORMAT_1);
    const { second } = await twoRevisions(h);
    await rm(h.services.archive.paths('ws').manifest(second));
    expectProblem(await verify(h, ['ws']), 'ws', second, 'manifest-missing');
  });

  it("the head's manifest is garbage or another revision's: manifest-invalid, and the command still reports", async () => {
    const h = await createHarness(FORMAT_1);
    const { first, second } = await twoRevisions(h);
    const paths = h.services.archive.paths('ws');
    await writeFile(paths.manifest(second), '{"format":1,"entr');
    const garbage = await verify(h, ['ws']);
    expectProblem(garbage, 'ws', second, 'manifest-invalid');
    expect(garbage.json.problems.find((p) => p.problem === 'manifest-invalid')?.detail).toContain('not valid JSON');
    // The other revision was still re-hashed.
    expect(garbage.json.checks.map((c) => c.revision)).toEqual([first]);

    await writeFile(paths.manifest(second), await readFile(paths.manifest(first)));
    const swapped = await verify(h, ['ws']);
    expectProblem(swapped, 'ws', second, 'manifest-invalid');
    expect(swapped.json.problems.find((p) => p.problem === 'manifest-invalid')?.detail).toContain(`describes ws/${first}`);
  });

  it('the whole archive root deleted while Redis lists attached revisions: archive-missing, also with --all', async () => {
    const h = await createHarness();
    const { second } = await twoRevisions(h);
    await rm(h.config.paths.archiveRoot, { recursive: true });
    expectProblem(await verify(h, ['ws']), 'ws', second, 'archive-missing');
    const all = await verify(h, ['--all']);
    expectProblem(all, 'ws', second, 'archive-missing');
    expect(all.json.attached).toBe(2);
  });

  it('current dangling, or pointing at another revision than the attached head: current-dangling / current-not-head', async () => {
    const h = await createHarness();
    const { first, second } = await twoRevisions(h);
    const paths = h.services.archive.paths('ws');
    const nowhere = 'r20200101T000000000Z-g1-gone00';
    await symlink(paths.currentTarget(nowhere), `${paths.current}.new`);
    await rename(`${paths.current}.new`, paths.current);
    const dangling = await verify(h, ['ws']);
    expectProblem(dangling, 'ws', nowhere, 'current-dangling');
    expectProblem(dangling, 'ws', nowhere, 'current-not-head');

    await h.services.archive.flipCurrent('ws', first);
    const behind = await verify(h, ['ws']);
    expectProblem(behind, 'ws', first, 'current-not-head');
    expect(behind.json.problems.map((p) => p.problem)).toEqual(['current-not-head']);
    expect(behind.json.problems[0]!.detail).toContain(second);

    await rm(paths.current);
    expectProblem(await verify(h, ['ws']), 'ws', second, 'current-missing');
  });

  it('an attached non-head record whose revision is gone: directory-missing and manifest-missing, even when re-hashing is sampled away', async () => {
    const h = await createHarness(FORMAT_1);
    const { first } = await twoRevisions(h);
    const paths = h.services.archive.paths('ws');
    await rm(paths.revision(first), { recursive: true });
    await rm(paths.manifest(first));
    for (const args of [['ws'], ['ws', '--sample', '0.000001']]) {
      const result = await verify(h, args);
      expectProblem(result, 'ws', first, 'directory-missing');
      expectProblem(result, 'ws', first, 'manifest-missing');
      expect(result.json.problems.every((p) => p.revision === first)).toBe(true);
    }
  });

  it("a record whose file count or bytes disagree with the manifest: record-mismatch; only the named workspaces are checked", async () => {
    const h = await createHarness();
    const { second } = await twoRevisions(h);
    await twoRevisions(h, 'healthy');
    const record = (await h.services.checkpoints.byRevision('ws', 'portable_workspace', second))!;
    await h.services.redis.hset(h.services.keys.checkpoint(h.services.keys.bucket('ws'), record.id), 'files', String(record.files + 1));
    expectProblem(await verify(h, ['ws']), 'ws', second, 'record-mismatch');
    expect((await verify(h, ['healthy'])).code).toBe(0);
  });

  it('bad arguments are usage errors (exit 2)', async () => {
    const h = await createHarness();
    for (const args of [[], ['ws', '--all'], ['../x'], ['ws', '--sample', '0']]) {
      const result = await runFleet(['verify', ...args], h.env);
      expect(result.code, args.join(' ')).toBe(2);
    }
  });
});
