// `fleet archive migrate` (a real bin/fleet.js process against the test Redis and a real archive)
// turns format 1 revisions into format 2 records under the same ids: every revision reads exactly
// as before (names as bytes, types, modes, contents, symlink targets, FIFOs, hard links, ns
// mtimes), a SIGKILL mid-migration loses nothing and the next run finishes, bad input is refused
// naming the flag, symlinks planted in a revision directory are never followed, and a persist
// racing the migration is fenced by the workspace's locks. Run `npm run build` first.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ManifestEntry } from '../../src/archive/manifest.js';
import { sameMtime } from '../../src/tree/file-times.js';
import type { Harness } from '../helpers/workspace-harness.js';
import { createHarness } from '../helpers/workspace-harness.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testConnection } from '../helpers/fleet-env.js';
import { contentFacts, describeTree, plantPortableTree } from '../helpers/portable-tree.js';
import { killGroup, ROOT, runFleet, spawnTracked, startFleet, cliJson } from '../helpers/processes.js';
import { readerView } from '../helpers/read-archive.js';
import { waitFor } from '../helpers/wait.js';

const HELD_PERSIST_WORKER = path.join(ROOT, 'test', 'fixtures', 'held-persist-worker.mjs');

interface RevisionJson {
  workspaceId: string;
  revision: string;
  outcome: string;
  files: number;
  readFiles: number;
  currentFlipped: boolean;
  removedFormat1: boolean;
  mismatches?: { path: string; problem: string }[];
}

interface MigrationJson {
  dryRun: boolean;
  workspaces: number;
  revisions: RevisionJson[];
  converted: number;
  alreadyConverted: number;
  failed: number;
  removedFormat1: number;
  currentFlipped: number;
}

type View = Awaited<ReturnType<typeof readerView>>;

// A fleet with format 1 revisions: `ws` (the portable tree, then one file changed and one removed) and `other`.
async function format1Fleet(overrides: Record<string, string> = {}) {
  // Short lock TTL: a lock a killed migration held expires quickly.
  const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '1', FLEET_LOCK_TTL_MS: '1000', ...overrides });
  await h.provision('ws');
  await plantPortableTree(h.live('ws'));
  const r1 = (await h.persist('ws')).revision!;
  await writeFile(path.join(h.live('ws'), 'a/b/c/d/e/deep.txt'), 'changed');
  await rm(path.join(h.live('ws'), 'exec.sh'));
  const r2 = (await h.persist('ws')).revision!;
  await h.provision('other');
  await h.write('other', { 'x.txt': 'x', 'dir/y.txt': 'y' });
  const r3 = (await h.persist('other')).revision!;
  const revisions = [['ws', r1], ['ws', r2], ['other', r3]] as const;
  for (const [ws, id] of revisions) expect(await h.services.archive.formatOf(ws, id)).toBe(1);
  return { h, r1, r2, r3, revisions };
}

// What readers see of each revision: the stdlib reader's listing and extracted tree, and the fleet's own listing.
async function views(h: Harness, revisions: readonly (readonly [string, string])[]): Promise<Map<string, View & { fleet: ManifestEntry[] }>> {
  const out = new Map<string, View & { fleet: ManifestEntry[] }>();
  for (const [ws, id] of revisions) {
    const manifest = (await h.services.archive.readManifest(ws, id))!;
    // Format 1 manifests also carry each file's inode at commit time (`i`), which is not part of what a revision holds.
    out.set(`${ws}/${id}`, { ...(await readerView(h.config.paths.archiveRoot, ws, id)), fleet: manifest.entries.map(({ i: _inode, ...entry }) => entry) });
  }
  return out;
}

// Expects every revision to read as it did, now from its format 2 record.
function expectSameViews(after: Map<string, View & { fleet: ManifestEntry[] }>, before: Map<string, View & { fleet: ManifestEntry[] }>): void {
  expect([...after.keys()]).toEqual([...before.keys()]);
  for (const [key, was] of before) {
    const now = after.get(key)!;
    expect(now.format, key).toBe(2);
    expect(now.entries, `${key}: listing`).toEqual(was.entries);
    expect(now.fleet, `${key}: the fleet's listing`).toEqual(was.fleet);
    expect(now.tree, `${key}: extracted tree`).toEqual(was.tree);
  }
}

// Every path below `dir` with its type, size and mtime (what "nothing written" compares; names as bytes).
function snapshot(dir: string): string[] {
  return execFileSync('find', [dir, '-printf', '%P %y %s %T@\\0']).toString('latin1').split('\0').sort();
}

async function migrate(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; report: MigrationJson; stderr: string }> {
  const result = await runFleet(['archive', 'migrate', '--json', ...args], env);
  expect(result.stdout, result.stderr).not.toBe('');
  return { code: result.code, report: cliJson(result.stdout) as MigrationJson, stderr: result.stderr };
}

const outcomes = (report: MigrationJson) => report.revisions.map((r) => `${r.workspaceId}/${r.revision}:${r.outcome}`);

// Each test persists, reads every revision twice through the stdlib reader and spawns the CLI several times.
describe('fleet archive migrate', { timeout: 180_000 }, () => {
  it('converts every format 1 revision; each reads exactly as before; --remove-format1 then drops the format 1 copies', async () => {
    const { h, r1, r2, r3, revisions } = await format1Fleet();
    const before = await views(h, revisions);
    // The operator switched the fleet to format 2 first (so nothing writes format 1 any more).
    const env = { ...h.env, FLEET_ARCHIVE_FORMAT: '2' };

    const text = await runFleet(['archive', 'migrate'], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`ws ${r1}: converted (`);
    expect(text.stdout).toContain(`ws ${r2}: converted (`);
    expect(text.stdout).toMatch(/3 revision\(s\) converted, 0 already converted, 0 not migrated, in 2 workspace\(s\)/);
    // Progress goes to stderr, the report to stdout.
    expect(text.stderr).toContain(`migrate [`);
    for (const [ws, id] of revisions) expect(await h.services.archive.formatOf(ws, id)).toBe(2);
    expect(await h.services.archive.currentLink('ws')).toEqual({ revision: r2, format: 2 });
    expect(await h.services.archive.currentLink('other')).toEqual({ revision: r3, format: 2 });
    expectSameViews(await views(h, revisions), before);
    // Redis is untouched: the attached checkpoint names the same revision id.
    expect((await h.services.checkpoints.current('ws'))?.workspaceRevision).toBe(r2);
    // The format 1 copies stay until asked.
    const paths = h.services.archive.paths('ws');
    expect((await readdir(paths.revs)).sort()).toEqual([r1, `${r1}.manifest.json`, `${r1}.rev.json`, r2, `${r2}.manifest.json`, `${r2}.rev.json`].sort());

    const again = await migrate(env, ['--remove-format1']);
    expect(again.code, again.stderr).toBe(0);
    expect(outcomes(again.report)).toEqual([`other/${r3}:already-converted`, `ws/${r1}:already-converted`, `ws/${r2}:already-converted`]);
    expect(again.report).toMatchObject({ converted: 0, alreadyConverted: 3, failed: 0, removedFormat1: 3, currentFlipped: 0 });
    expect((await readdir(paths.revs)).sort()).toEqual([`${r1}.rev.json`, `${r2}.rev.json`]);
    expectSameViews(await views(h, revisions), before);
    // The fleet's own materialization agrees (export writes times through Node: exact or cut to µs).
    const exported = path.join(await tempDir('migrated-export'), 'tree');
    const exportRun = await runFleet(['export', 'ws', '--to', exported], env);
    expect(exportRun.code, exportRun.stderr).toBe(0);
    const copy = await describeTree(exported);
    const source = before.get(`ws/${r2}`)!.tree;
    expect(contentFacts(copy)).toEqual(contentFacts(source));
    for (const [p, facts] of source) if (facts.mtimeNs !== undefined) expect(sameMtime(copy.get(p)!.mtimeNs!, facts.mtimeNs), `mtime of ${p}`).toBe(true);

    // Nothing is left to do.
    const idle = await migrate(env, ['--remove-format1']);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.report.revisions).toEqual([]);
  });

  it('reads each shared inode once: the second revision of a workspace reuses the objects of its hard-linked files', async () => {
    const { h, r1, r2 } = await format1Fleet();
    const { code, report, stderr } = await migrate({ ...h.env, FLEET_ARCHIVE_FORMAT: '2' }, ['--workspace', 'ws']);
    expect(code, stderr).toBe(0);
    expect(report.workspaces).toBe(1);
    const [first, second] = report.revisions;
    expect(first).toMatchObject({ revision: r1, outcome: 'converted', currentFlipped: false });
    // Two names of one inode are read once at most.
    expect(first!.readFiles).toBeGreaterThanOrEqual(first!.files - 1);
    expect(second).toMatchObject({ revision: r2, outcome: 'converted', currentFlipped: true });
    // Only the changed file is read again.
    expect(second!.readFiles).toBe(1);
    expect(await h.services.archive.formatOf('other', (await h.services.archive.revisions('other'))[0]!)).toBe(1);
  });

  it('--dry-run reports what a run would do and writes nothing', async () => {
    const { h, r1, r2, r3 } = await format1Fleet();
    const archiveRoot = h.config.paths.archiveRoot;
    const was = snapshot(archiveRoot);
    const { code, report, stderr } = await migrate(h.env, ['--dry-run']);
    expect(code, stderr).toBe(0);
    expect(report.dryRun).toBe(true);
    expect(outcomes(report)).toEqual([`other/${r3}:would-convert`, `ws/${r1}:would-convert`, `ws/${r2}:would-convert`]);
    expect(report.revisions.every((r) => r.files > 0)).toBe(true);
    expect(snapshot(archiveRoot)).toEqual(was);
    const text = await runFleet(['archive', 'migrate', '--dry-run'], h.env);
    expect(text.stdout).toContain('dry run: 3 revision(s) to convert, 0 to finish, in 2 workspace(s); nothing written');
  });

  it('bad input is refused naming the flag and the value, and nothing is written', async () => {
    const { h } = await format1Fleet();
    const archiveRoot = h.config.paths.archiveRoot;
    const was = snapshot(archiveRoot);
    for (const [args, named, env] of [
      [['--workspace', '../ws'], '--workspace', h.env],
      [['--workspace', 'never-persisted'], 'never-persisted', h.env],
      [['--lock-wait', 'soon'], '--lock-wait', h.env],
      [['--lock-wait', '0'], '--lock-wait', h.env],
      // Format 1 persists build on the current revision's directory: its copy must stay while they run.
      [['--remove-format1'], '--remove-format1', h.env],
      [['--dry-run', '--remove-format1', '--workspace', 'ws', '--bogus'], '--bogus', { ...h.env, FLEET_ARCHIVE_FORMAT: '2' }],
    ] as const) {
      const result = await runFleet(['archive', 'migrate', ...args], env);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(named);
      expect(result.stdout).toBe('');
    }
    expect(snapshot(archiveRoot)).toEqual(was);
  });

  it('a SIGKILL mid-migration loses nothing: every revision still reads, and the next run finishes', async () => {
    const { h, r1, r2, r3, revisions } = await format1Fleet();
    const before = await views(h, revisions);
    const env = { ...h.env, FLEET_ARCHIVE_FORMAT: '2' };
    // A provisioning of `ws` holds its provision lock: the migration converts `other`, then `ws`'s
    // first revision up to its durable record, and waits there (to flip `current`, remove format 1).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => {
      void h.services.singleFlight.using('provision:ws', async () => {
        resolve();
        await released;
      });
    });
    addCleanup(() => release());
    await held;
    const run = startFleet(['archive', 'migrate'], env);
    await waitFor('the migration to wait for provision:ws', () => run.stderr().includes('waiting for lock provision:ws') || undefined, 60_000);
    killGroup(run.child, 'SIGKILL');
    expect((await run.exited).signal).toBe('SIGKILL');
    release();

    // Killed between the record and the flip: both copies of r1 are there, and every revision reads as before.
    expect(await h.services.archive.formatOf('other', r3)).toBe(2);
    expect(await h.services.archive.formatOf('ws', r1)).toBe(2);
    expect(await h.services.archive.formatOf('ws', r2)).toBe(1);
    expect(await h.services.archive.currentLink('ws')).toEqual({ revision: r2, format: 1 });
    const during = await views(h, revisions);
    for (const [key, was] of before) expect(during.get(key)!.tree, key).toEqual(was.tree);

    // The killed run's persist lock expires by itself (its TTL); the rerun waits for it, then finishes.
    const rerun = await migrate(env, ['--remove-format1']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(outcomes(rerun.report)).toEqual([`other/${r3}:already-converted`, `ws/${r1}:already-converted`, `ws/${r2}:converted`]);
    expect(rerun.report.revisions.find((r) => r.revision === r2)).toMatchObject({ currentFlipped: true, removedFormat1: true });
    expect(await h.services.archive.currentLink('ws')).toEqual({ revision: r2, format: 2 });
    expectSameViews(await views(h, revisions), before);
    // What the killed run left behind (a renamed format 1 copy, store temporaries) is litter for GC, never a revision.
    expect((await h.services.archive.revisions('ws')).sort()).toEqual([r1, r2]);
  });

  it('a SIGKILL while a revision is being converted loses nothing either', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '1', FLEET_LOCK_TTL_MS: '1000' });
    await h.provision('ws');
    const files: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) files[`d${i % 20}/f${i}.txt`] = `file ${i}`;
    await h.write('ws', files);
    const r1 = (await h.persist('ws')).revision!;
    const before = await views(h, [['ws', r1]]);
    const env = { ...h.env, FLEET_ARCHIVE_FORMAT: '2' };

    const run = startFleet(['archive', 'migrate'], env);
    // The first progress line: the conversion of r1 has begun.
    await waitFor('the conversion to report progress', () => run.stderr().includes(`ws ${r1}`) || undefined, 60_000);
    killGroup(run.child, 'SIGKILL');
    await run.exited;
    const during = await views(h, [['ws', r1]]);
    expect(during.get(`ws/${r1}`)!.tree).toEqual(before.get(`ws/${r1}`)!.tree);

    const rerun = await migrate(env);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await h.services.archive.currentLink('ws')).toEqual({ revision: r1, format: 2 });
    expectSameViews(await views(h, [['ws', r1]]), before);
  });

  it('never follows a symlink planted in a format 1 revision directory: that revision stays format 1, the rest go on', async () => {
    const { h, r1, r2, r3 } = await format1Fleet();
    const outside = await tempDir('outside');
    const secret = 'secret outside the archive';
    await writeFile(path.join(outside, 'secret.txt'), secret);
    await mkdir(path.join(outside, 'dir'));
    await writeFile(path.join(outside, 'dir', 'deep.txt'), secret);
    // r1's plain file and a directory become symlinks out of the archive.
    const dir = h.services.archive.paths('ws').revision(r1);
    await rm(path.join(dir, 'plain.txt'));
    await symlink(path.join(outside, 'secret.txt'), path.join(dir, 'plain.txt'));
    await chmod(path.join(dir, 'a', 'b'), 0o755);
    await rename(path.join(dir, 'a', 'b'), path.join(outside, 'moved-b'));
    await symlink(path.join(outside, 'dir'), path.join(dir, 'a', 'b'));

    const { code, report, stderr } = await migrate({ ...h.env, FLEET_ARCHIVE_FORMAT: '2' });
    expect(code).toBe(1);
    expect(stderr).toContain('MigrationMismatch');
    expect(stderr).toContain(`ws/${r1}`);
    const bad = report.revisions.find((r) => r.revision === r1)!;
    expect(bad.outcome).toBe('mismatch');
    expect(bad.mismatches).toEqual(expect.arrayContaining([{ path: 'plain.txt', problem: 'type' }, { path: 'a/b', problem: 'type' }]));
    expect(await h.services.archive.formatOf('ws', r1)).toBe(1);
    expect(await h.services.archive.formatOf('ws', r2)).toBe(2);
    expect(await h.services.archive.formatOf('other', r3)).toBe(2);
    // Nothing outside was read into the store.
    const secretId = createHash('sha256').update(secret).digest('hex');
    expect(await h.services.archive.objects.hasObject(secretId)).toBe(false);
  });

  it('a persist racing the migration is fenced by the persist lock: it commits first, the migration leaves its revision current', async () => {
    const { h, r2 } = await format1Fleet();
    const redis = testConnection(h.config);
    const p = h.config.redis.prefix;
    const worker = spawnTracked(process.execPath, [HELD_PERSIST_WORKER], { env: h.env });
    await worker.waitForOutput('ready');
    // A turn-end persist of `ws`, held while it holds the workspace's persist lock.
    await redis.set(`${p}:test:hold`, '1');
    expect((await runFleet(['persist', 'ws', '--delete'], h.env)).code).toBe(0);
    await waitFor('the persist to hold its lock', async () => ((await redis.llen(`${p}:test:started`)) === 1 ? true : undefined));

    const run = startFleet(['archive', 'migrate', '--workspace', 'ws', '--json'], h.env);
    await waitFor('the migration to wait for persist:ws', () => run.stderr().includes('waiting for lock persist:ws') || undefined, 60_000);
    await writeFile(path.join(h.live('ws'), 'during.txt'), 'written while the migration waited');
    await redis.del(`${p}:test:hold`);
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(0);

    const latest = (await h.services.checkpoints.current('ws'))!.workspaceRevision!;
    expect(latest).not.toBe(r2);
    // The migration converted what it had planned and never moved `current` off the persist's revision.
    const report = cliJson(run.stdout()) as MigrationJson;
    expect(report.revisions.map((r) => [r.outcome, r.currentFlipped])).toEqual([['converted', false], ['converted', false]]);
    expect(await h.services.archive.currentLink('ws')).toEqual({ revision: latest, format: 1 });
    expect((await readerView(h.config.paths.archiveRoot, 'ws', latest)).entries.some((e) => e.p === 'during.txt')).toBe(true);

    // The next run takes the revision the persist wrote.
    const rerun = await migrate(h.env, ['--workspace', 'ws']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.report.revisions).toMatchObject([{ revision: latest, outcome: 'converted', currentFlipped: true }]);
    expect(await h.services.archive.currentLink('ws')).toEqual({ revision: latest, format: 2 });
  });
});
