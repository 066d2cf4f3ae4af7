// A hostile Vercel sandbox lies in its listing, its delta archive and its second look at the
// files (an agent can replace find and tar; here the stand-in sandbox's PATH leads to fakes that
// print what the test planted), against the real SDK and the real fleet: nothing is written on the
// host but objects in the archive and the index (no host path is made from a sandbox name),
// nothing is followed, refused input commits nothing, and with the real tools back the next
// persist makes the archive exactly the tree again.
import { execFileSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { lookupPath } from '../../src/archive/revision-reader.js';
import { LISTING_RECORD } from '../../src/providers/vercel/tree-scripts.js';
import { tempDir } from '../helpers/fleet-env.js';
import { startSwapper, treeFacts } from '../helpers/hostile-tree.js';
import { revisionFacts } from '../helpers/revision-facts.js';
import { tarArchive, tarEntry } from '../helpers/vercel-standin/tar-fixture.js';
import { vercelWorkspace, type VercelWorkspace } from '../helpers/vercel-workspace.js';

const NUL = Buffer.of(0);

interface Rec {
  readonly type: string;
  readonly path: string;
  readonly size?: number;
  readonly mode?: string;
  readonly ino?: number;
  readonly target?: string;
}

// One listing record as GNU find prints it (an old, settled time; device 2049).
function record({ type, path: rel, size = 0, mode = '644', ino = 900_000, target = '' }: Rec): Buffer {
  return Buffer.concat([Buffer.from(`${type} ${size} ${mode} 1700000000.1234567890 1700000000.1234567890 ${ino} 2049`), NUL, Buffer.from(rel), NUL, Buffer.from(target), NUL]);
}

// The second look at the same files (paths as asked: `./a`).
const restat = (...records: Rec[]) => Buffer.concat(records.map((r) => record({ ...r, path: `./${r.path}` })));

// The real listing of the sandbox's tree, minus the records `drop` rejects.
function realListing(ws: VercelWorkspace, drop: (rel: string) => boolean = () => false): Buffer {
  const raw = execFileSync('find', ['.', '-mindepth', '1', '-printf', LISTING_RECORD], { cwd: ws.live });
  const fields = raw.toString('latin1').split('\0');
  const kept: string[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) if (!drop(fields[i + 1]!)) kept.push(`${fields[i]}\0${fields[i + 1]}\0${fields[i + 2]}\0`);
  return Buffer.from(kept.join(''), 'latin1');
}

// Fake find and tar on the sandbox's PATH, printing what `plant` put there.
async function fakeTools(ws: VercelWorkspace): Promise<{ plant(parts: { listing: Buffer; tar?: Buffer; restat?: Buffer }): Promise<void>; restore(): void }> {
  const dir = await tempDir('fake-tools');
  await writeFile(path.join(dir, 'find'), `#!/bin/sh\ncase " $* " in *" -maxdepth "*) cat '${dir}/restat' ;; *) cat '${dir}/listing' ;; esac\n`, { mode: 0o755 });
  await writeFile(path.join(dir, 'tar'), `#!/bin/sh\ncp '${dir}/delta.tgz' "$2"\n`, { mode: 0o755 });
  const env = ws.standin.sandbox(ws.handle)!.env as Record<string, string>;
  env.PATH = `${dir}:${process.env.PATH}`;
  return {
    async plant({ listing, tar = tarArchive(), restat: again = Buffer.alloc(0) }) {
      await writeFile(path.join(dir, 'listing'), listing);
      await writeFile(path.join(dir, 'delta.tgz'), gzipSync(tar));
      await writeFile(path.join(dir, 'restat'), again);
    },
    restore: () => void delete env.PATH,
  };
}

describe('hostile Vercel listing and delta (stand-in, real SDK)', () => {
  it('refuses planted .. and absolute paths, skips what was not asked for, never follows a planted link, keeps unreadable directories, and is repaired after a refused delta', { timeout: 120_000 }, async () => {
    const ws = await vercelWorkspace('hostile');
    const outside = await tempDir('outside');
    await writeFile(path.join(outside, 'secret.txt'), 'outside');
    const outsideBefore = await treeFacts(outside);
    await ws.sh('mkdir -p d closed && printf real > d/file && printf keep > closed/inner.txt && printf a > a.txt');
    await ws.persist();
    await ws.persist();
    const { archive } = ws.h.services;
    const revision = await archive.current(ws.workspaceId);
    // The content the current revision holds at `rel` (null: no file there).
    const archivedContent = async (rel: string) => {
      const record = (await archive.readRecord(ws.workspaceId, (await archive.current(ws.workspaceId))!))!;
      const node = await lookupPath(archive.objects, record.root, Buffer.from(rel));
      return node?.type === 'f' ? (await archive.objects.readObject(node.object)).toString() : null;
    };
    const base = realListing(ws);
    const fakes = await fakeTools(ws);
    const nothingOutside = async () => {
      expect(await treeFacts(outside)).toBe(outsideBefore);
      expect(await readdir(ws.h.config.paths.vercelMirrorRoot)).toEqual([path.basename(ws.mirror.dir)]);
      expect((await readdir(ws.mirror.dir)).filter((n) => n !== 'listed-index.json')).toEqual([]);
      expect(execFileSync('find', [ws.h.config.paths.home, ws.live, outside, '-name', 'escape*'], { encoding: 'utf8' })).toBe('');
    };

    // Listings naming paths out of the tree, or malformed, are refused whole: nothing committed.
    for (const hostile of [record({ type: 'f', path: '../escape' }), record({ type: 'f', path: '/tmp/escape-abs' }), record({ type: 'f', path: 'd/../../escape' }), Buffer.from('f 1 999 1 1 1 1\0bad-mode\0\0')]) {
      await fakes.plant({ listing: Buffer.concat([base, hostile]) });
      await expect(ws.persist()).rejects.toMatchObject({ classification: 'permanent', cause: { code: 'UnsafeListing' } });
      expect(await ws.h.services.archive.current(ws.workspaceId)).toBe(revision);
      await nothingOutside();
    }

    // Claims the host must not follow: a symlink out with a "file" below it, an archive with a
    // link, a hard link, a second copy and a file nobody asked for; a name with a newline; a file
    // whose second look differs (it changed while archived).
    const swFile = { type: 'f', path: 'sw/f', size: 2, ino: 900_001 };
    const newline = { type: 'f', path: 'nl\nname', size: 3, ino: 900_002 };
    const unstable = { type: 'f', path: 'unstable.txt', size: 4, ino: 900_003 };
    await fakes.plant({
      listing: Buffer.concat([base, record({ type: 'l', path: 'lnk', target: outside }), record({ type: 'f', path: 'lnk/evil', size: 4 }), record({ type: 'd', path: 'sw', mode: '755' }), record(swFile), record(newline), record(unstable)]),
      tar: tarArchive(
        tarEntry({ name: 'lnk/evil', content: 'evil' }),
        tarEntry({ name: 'sw/f', type: '2', linkname: `${outside}/secret.txt` }),
        tarEntry({ name: 'sw/f', type: '1', linkname: 'a.txt' }),
        tarEntry({ name: 'sw/f', content: 'ok' }),
        tarEntry({ name: 'sw/f', content: 'no' }),
        tarEntry({ name: 'nl\nname', content: 'nl!' }),
        tarEntry({ name: 'unstable.txt', content: 'torn' }),
        tarEntry({ name: 'stray', content: 'not asked for' }),
      ),
      restat: restat(swFile, newline, { ...unstable, ino: 900_099 }),
    });
    await ws.persist();
    const archived = await revisionFacts(ws.h.services.archive, ws.workspaceId);
    expect(archived.lnk).toBe(`l ${Buffer.from(outside).toString('hex')}`);
    expect(archived['sw/f']).toMatch(/^f 644 /);
    expect(await archivedContent('sw/f')).toBe('ok');
    expect(await archivedContent('nl\nname')).toBe('nl!');
    for (const absent of ['lnk/evil', 'unstable.txt', 'stray']) expect(archived[absent]).toBeUndefined();
    await nothingOutside();

    // A directory the sandbox's user cannot read is listed as such: the revision keeps it whole.
    await fakes.plant({ listing: Buffer.concat([realListing(ws, (rel) => rel === 'closed' || rel.startsWith('closed/')), record({ type: 'u', path: 'closed', mode: '0' })]) });
    await ws.persist();
    expect(await archivedContent('closed/inner.txt')).toBe('keep');

    // A delta with a planted .. after a good entry: refused halfway through (a.txt already
    // stored as an object, which nothing names), nothing committed, nothing outside.
    const newA = { type: 'f', path: 'a.txt', size: 2, ino: 900_010 };
    await fakes.plant({
      listing: Buffer.concat([realListing(ws, (rel) => rel === 'a.txt'), record(newA)]),
      tar: tarArchive(tarEntry({ name: 'a.txt', content: 'A!' }), tarEntry({ name: '../../escape', content: 'evil' }), tarEntry({ name: '/tmp/escape-abs', content: 'evil' })),
      restat: restat(newA),
    });
    const before = await ws.h.services.archive.current(ws.workspaceId);
    await expect(ws.persist()).rejects.toMatchObject({ classification: 'permanent', cause: { code: 'UnsafeTarEntry' } });
    expect(await ws.h.services.archive.current(ws.workspaceId)).toBe(before);
    expect(await archivedContent('a.txt')).toBe('a');
    await nothingOutside();

    // The real tools again: the archive becomes exactly the tree.
    fakes.restore();
    await ws.persist();
    await ws.expectArchived();
    expect(await archivedContent('a.txt')).toBe('a');
    expect((await revisionFacts(archive, ws.workspaceId)).lnk).toBeUndefined();
    await nothingOutside();

    // Real tools, and the sandbox swaps a directory for a symlink out of the tree while it is
    // listed and archived: whatever each persist sees, the host writes only into its archive.
    // (The stand-in's sandbox is the host, so its tar may read `outside` through the link; in a
    // real sandbox that is the sandbox's own file. Writing is what must never leave the archive.)
    await writeFile(path.join(outside, 'f'), 'outside f');
    const outsideWithF = await treeFacts(outside);
    await ws.sh(`mkdir -p swap-dir && printf inside > swap-dir/f && ln -s ${outside} swap-link`);
    const swapper = await startSwapper(path.join(ws.live, 'swap-dir'), path.join(ws.live, 'swap-link'));
    // A tree changing while it is listed is normal work: every one of these persists succeeds.
    for (let round = 0; round < 8; round++) expect((await ws.persist()).result.revision).toBeTruthy();
    await swapper.stop();
    expect(await treeFacts(outside)).toBe(outsideWithF);
    await ws.persist();
    await ws.expectArchived();
  });
});
