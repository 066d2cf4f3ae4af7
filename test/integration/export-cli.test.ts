// `fleet export` (a real bin/fleet.js process) writes a revision of either archive format as a
// plain tree or a POSIX tar, identical to the live tree it was persisted from: names as bytes,
// types, modes, contents, symlink targets, FIFOs, hard links, mtimes (ns), holes. It reads the
// archive only (no Redis) and never writes into anything that exists. Run `npm run build` first.
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTar } from '../../src/providers/vercel/read-tar.js';
import { sameMtime, storedMtimeNs } from '../../src/tree/file-times.js';
import { tempDir } from '../helpers/fleet-env.js';
import { contentFacts, describeTree, plantPortableTree, type EntryFacts } from '../helpers/portable-tree.js';
import { runFleet, cliJson } from '../helpers/processes.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

interface ExportJson {
  workspaceId: string;
  revision: string;
  format: 1 | 2;
  files: number;
  bytes: number;
  to?: string;
  tar?: string;
  via?: 'tar' | 'materialize' | 'copy';
  tarFailure?: string;
}

interface SameTreeOptions {
  /** The copy keeps holes. */
  readonly sparse: boolean;
  /** Format 1 stores a FIFO as a new FIFO made when it was archived: its time is not the source's. */
  readonly fifoTimes: boolean;
  /**
   * The copy's times went through Node twice (live → format 1 archive → export): each pass turns
   * the time into a double and cuts it to microseconds, so the second can land 1 µs below the first.
   */
  readonly twiceSet?: boolean;
}

// Expects `copy` to be `source` exactly, mtimes included (as Node or tar set them).
function expectSameTree(copy: Map<string, EntryFacts>, source: Map<string, EntryFacts>, options: SameTreeOptions): void {
  expect(contentFacts(copy)).toEqual(contentFacts(source));
  for (const [p, facts] of source) {
    const copied = copy.get(p)!;
    if (facts.mtimeNs === undefined || (facts.type === 'fifo' && !options.fifoTimes)) continue;
    const drift = storedMtimeNs(facts.mtimeNs) - copied.mtimeNs!;
    if (options.twiceSet && drift === 1000n) continue;
    expect(sameMtime(copied.mtimeNs!, facts.mtimeNs), `mtime of ${p}: ${copied.mtimeNs} vs ${facts.mtimeNs}`).toBe(true);
    if (options.sparse && facts.sparse) expect(copied.sparse, `holes of ${p}`).toBe(true);
  }
}

// A workspace with two revisions in `format`: the planted tree, then one changed and one removed file.
async function twoRevisions(format: '1' | '2') {
  const h = await createHarness({ FLEET_ARCHIVE_FORMAT: format });
  await h.provision('ws');
  const live = h.live('ws');
  await plantPortableTree(live);
  const first = await h.persist('ws');
  const firstTree = await describeTree(live);
  await writeFile(path.join(live, 'a/b/c/d/e/deep.txt'), 'changed');
  execFileSync('rm', ['-f', path.join(live, 'exec.sh')]);
  const second = await h.persist('ws');
  const secondTree = await describeTree(live);
  expect(await h.services.archive.formatOf('ws', second.revision!)).toBe(Number(format));
  return { h, first: first.revision!, second: second.revision!, firstTree, secondTree };
}

// `fleet export` without REDIS_URL: the archive is all it reads.
const withoutRedis = (h: Harness) => {
  const { REDIS_URL: _redis, ...env } = h.env;
  return env;
};

async function exportJson(h: Harness, args: string[]): Promise<ExportJson> {
  const result = await runFleet(['export', 'ws', ...args, '--json'], withoutRedis(h));
  expect(result.code, result.stderr).toBe(0);
  return cliJson(result.stdout) as ExportJson;
}

describe('fleet export', () => {
  for (const format of ['1', '2'] as const) {
    it(`format ${format}: --to writes the current revision as the tree it was persisted from; --tar an older one`, async () => {
      const { h, first, second, firstTree, secondTree } = await twoRevisions(format);
      const out = await tempDir('export');

      const dir = path.join(out, 'tree');
      const summary = await exportJson(h, ['--to', dir]);
      // Format 2 is written through the host's tar, as a local restore is; format 1 is copied.
      expect(summary).toMatchObject({ workspaceId: 'ws', revision: second, format: Number(format), to: dir, via: format === '2' ? 'tar' : 'copy' });
      expect(summary).not.toHaveProperty('tarFailure');
      expectSameTree(await describeTree(dir), secondTree, { sparse: true, fifoTimes: format === '2', twiceSet: format === '1' });
      // Nothing else was left beside the target.
      expect(await readdir(out)).toEqual(['tree']);

      const tar = path.join(out, 'first.tar');
      const tarSummary = await exportJson(h, ['--revision', first, '--tar', tar]);
      expect(tarSummary).toMatchObject({ revision: first, format: Number(format), tar });
      const extracted = path.join(out, 'extracted');
      await mkdir(extracted);
      execFileSync('tar', ['-x', '-p', '--numeric-owner', '-f', tar, '-C', extracted]);
      expectSameTree(await describeTree(extracted), firstTree, { sparse: false, fifoTimes: format === '2' });

      // The repo's own tar reader agrees on names (pax paths and links included) and types.
      const names: string[] = [];
      const bytes = await readFile(tar);
      for await (const { entry } of readTar((async function* () {
        yield bytes;
      })())) names.push(`${entry.type}:${entry.path.replace(/\/$/, '')}`);
      expect(names).toContain(`directory:long-${'x'.repeat(60)}/${'y'.repeat(60)}`);
      // Python's tarfile reads it too (pax records, `hdrcharset=BINARY` names as their bytes).
      const listed = execFileSync('python3', ['-c', 'import sys, tarfile\nfor m in tarfile.open(sys.argv[1]): sys.stdout.buffer.write(m.name.encode("utf-8", "surrogateescape") + b"\\0")', tar]);
      expect(listed.toString('latin1').split('\0').filter(Boolean).length).toBe(names.length);
      expect(listed.includes(Buffer.concat([Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('-dir/'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('z'.repeat(100))]))).toBe(true);
      // Two names of one inode: the first one met is the file, the other a link to it.
      expect(names.filter((n) => /^(file|hardlink):(a\/hard-b|hard-a)$/.test(n)).sort()).toEqual(format === '2' ? ['file:a/hard-b', 'hardlink:hard-a'] : ['file:hard-a', 'hardlink:a/hard-b']);
      expect(names.filter((n) => n.startsWith('file:')).length + names.filter((n) => n.startsWith('hardlink:')).length).toBe(tarSummary.files);
    });
  }

  it('a non-empty --to, an existing --tar file, bad flags and unknown revisions are refused, and nothing is written', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    await h.persist('ws');
    const out = await tempDir('export');
    await mkdir(path.join(out, 'full'));
    await writeFile(path.join(out, 'full', 'keep.txt'), 'mine');
    await writeFile(path.join(out, 'exists.tar'), 'mine');
    const env = withoutRedis(h);
    for (const args of [
      ['ws', '--to', path.join(out, 'full')],
      ['ws', '--tar', path.join(out, 'exists.tar')],
      ['ws', '--to', path.join(out, 'x'), '--tar', path.join(out, 'y.tar')],
      ['ws'],
      ['../ws', '--to', path.join(out, 'x')],
      ['ws', '--revision', 'not-a-revision', '--to', path.join(out, 'x')],
      ['ws', '--to', path.join(out, 'no', 'parent')],
    ]) {
      const result = await runFleet(['export', ...args], env);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
    }
    const unknown = await runFleet(['export', 'ws', '--revision', 'r20200101T000000000Z-g1-gone00', '--to', path.join(out, 'x')], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('RevisionNotFound');
    const never = await runFleet(['export', 'never-persisted', '--to', path.join(out, 'x')], env);
    expect(never.code).toBe(1);
    expect((await readdir(out)).sort()).toEqual(['exists.tar', 'full']);
    expect(await readdir(path.join(out, 'full'))).toEqual(['keep.txt']);
    expect(await readFile(path.join(out, 'exists.tar'), 'utf8')).toBe('mine');
  });

  it('format 2 --to with a host tar that fails midway: the tree is still exact, made file by file, and the failure is said', async () => {
    const { h, secondTree } = await twoRevisions('2');
    const realTar = execFileSync('sh', ['-c', 'command -v tar'], { encoding: 'utf8' }).trim();
    const bin = await tempDir('tar-wrapper');
    await writeFile(path.join(bin, 'tar'), `#!/bin/sh\ncase "$*" in *"-x "*) head -c 8192 > /dev/null; echo "tar: simulated: No space left on device" >&2; exit 2;; esac\nexec '${realTar}' "$@"\n`, { mode: 0o755 });
    const out = await tempDir('export');
    const dir = path.join(out, 'tree');
    const result = await runFleet(['export', 'ws', '--to', dir, '--json'], { ...withoutRedis(h), PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` });
    expect(result.code, result.stderr).toBe(0);
    const summary = cliJson(result.stdout) as ExportJson;
    expect(summary).toMatchObject({ via: 'materialize', tarFailure: expect.stringMatching(/^tar exited 2: tar: simulated: No space left on device/) });
    expect(result.stderr).toContain("export: the host's tar failed (tar exited 2");
    expectSameTree(await describeTree(dir), secondTree, { sparse: true, fifoTimes: true });
    expect(await readdir(out)).toEqual(['tree']);
  });

  it('an empty --to directory is filled; progress goes to stderr, the summary to stdout', async () => {
    const { h, secondTree } = await twoRevisions('2');
    const out = await tempDir('export');
    const dir = path.join(out, 'empty');
    await mkdir(dir);
    const result = await runFleet(['export', 'ws', '--to', dir], withoutRedis(h));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ws: revision r\S+ \(format 2\) exported to .*: \d+ files, \d+ bytes\n$/);
    expect(result.stderr).toContain('export ws/');
    expectSameTree(await describeTree(dir), secondTree, { sparse: true, fifoTimes: true });
  });
});
