// examples/read-archive.py, a reader written from docs/archive-format.md alone (Python stdlib,
// nothing of the project), against real archives the fleet wrote: its listing equals the
// fleet's `readManifest`, and the tree it extracts equals the live tree the revision was
// persisted from, byte for byte (names as bytes, modes, contents, symlink targets, FIFOs, hard
// links, holes, nanosecond mtimes).
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writePackSync } from '../../src/archive/pack-file.js';
import { tempDir } from '../helpers/fleet-env.js';
import { contentFacts, describeTree, plantPortableTree } from '../helpers/portable-tree.js';
import { readerListing, runReader } from '../helpers/read-archive.js';
import { createHarness, type Harness } from '../helpers/workspace-harness.js';

// The reader on the harness's archive.
const reader = (h: Harness, args: string[]) => runReader(h.config.paths.archiveRoot, args);
const listing = (h: Harness, args: string[]) => readerListing(h.config.paths.archiveRoot, args);

// A workspace persisted in `format` from the planted tree; the live tree's description.
async function persisted(format: '1' | '2') {
  const h = await createHarness({ FLEET_ARCHIVE_FORMAT: format });
  await h.provision('ws');
  await plantPortableTree(h.live('ws'));
  const { revision } = await h.persist('ws');
  return { h, revision: revision!, source: await describeTree(h.live('ws')) };
}

describe('examples/read-archive.py', () => {
  for (const format of ['1', '2'] as const) {
    it(`format ${format}: lists what readManifest lists and extracts the live tree exactly`, async () => {
      const { h, revision, source } = await persisted(format);
      const manifest = (await h.services.archive.readManifest('ws', revision))!;
      const listed = listing(h, ['ws']);
      expect(listed.format).toBe(Number(format));
      // Format 1 manifests also carry each file's inode at commit time (`i`), which is not part of the format.
      expect(listed.entries).toEqual(manifest.entries.map(({ i: _inode, ...entry }) => entry));
      expect(listed.entries.length).toBeGreaterThan(40);

      const dest = path.join(await tempDir('read-archive'), 'tree');
      const extracted = reader(h, ['ws', 'extract', dest]);
      expect(extracted.code, extracted.stderr).toBe(0);
      const copy = await describeTree(dest);
      expect(contentFacts(copy)).toEqual(contentFacts(source));
      for (const [p, facts] of source) {
        const got = copy.get(p)!;
        if (facts.sparse) expect(got.sparse, `holes of ${p}`).toBe(true);
        // Python sets nanosecond times: the live time itself (format 2 trees and format 1 manifests record it).
        if (facts.type === 'file' || facts.type === 'fifo') expect(got.mtimeNs, `mtime of ${p}`).toBe(facts.mtimeNs);
      }
    });
  }

  it('a history that mixes both formats: revisions lists each with its format, and --revision reads either', async () => {
    const h1 = await createHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    await h1.provision('ws');
    await h1.write('ws', { 'a.txt': 'one', 'dir/b.txt': 'two' });
    const old = (await h1.persist('ws')).revision!;
    const h2 = await createHarness({ FLEET_ARCHIVE_FORMAT: '2', REDIS_URL: h1.env.REDIS_URL!, FLEET_PREFIX: h1.env.FLEET_PREFIX!, FLEET_HOME: h1.env.FLEET_HOME! });
    await h2.write('ws', { 'a.txt': 'three' });
    const now = (await h2.persist('ws')).revision!;
    const result = reader(h2, ['ws', 'revisions']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe([`${old} format 1`, `${now} format 2 current`].sort().join('\n') + '\n');
    expect(listing(h2, ['ws', '--revision', old]).entries.find((e) => e.p === 'a.txt')).toMatchObject({ s: 3 });
    expect(listing(h2, ['ws']).entries.find((e) => e.p === 'a.txt')).toMatchObject({ s: 5 });
  });

  it('format 2 with trees stored as patches: every revision lists and extracts exactly; a patch of a missing base is refused', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    await h.write('ws', Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`big/f-${String(i).padStart(2, '0')}.txt`, `first ${i}`])));
    const first = (await h.persist('ws')).revision!;
    await h.write('ws', { 'big/f-07.txt': 'changed', 'big/new \u00e9.txt': 'added', 'top.txt': 'top' });
    await rm(path.join(h.live('ws'), 'big', 'f-09.txt'));
    const second = (await h.persist('ws')).revision!;
    const store = h.services.archive.objects;
    const { root } = (await h.services.archive.readRecord('ws', second))!;
    const big = (await store.readTree(root)).find((n) => n.name.toString() === 'big')!;
    const stored = await store.loadTree((big as { tree: string }).tree);
    expect(stored.base, 'big/ is stored as a patch').not.toBeNull();
    for (const revision of [first, second]) {
      const manifest = (await h.services.archive.readManifest('ws', revision))!;
      expect(listing(h, ['ws', '--revision', revision]).entries).toEqual(manifest.entries);
    }
    const dest = path.join(await tempDir('read-archive'), 'tree');
    const extracted = reader(h, ['ws', 'extract', dest]);
    expect(extracted.code, extracted.stderr).toBe(0);
    expect(contentFacts(await describeTree(dest))).toEqual(contentFacts(await describeTree(h.live('ws'))));
    await rm(store.treePath(stored.base!));
    const refused = reader(h, ['ws', 'list']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`which is missing`);
  });

  it('format 2 with its small objects in packs (not yet written by the fleet): extracts exactly; an index that lies is refused', async () => {
    const { h, source } = await persisted('2');
    const objectsDir = path.join(h.config.paths.archiveRoot, '.store', 'objects');
    const packsDir = path.join(h.config.paths.archiveRoot, '.store', 'packs');
    const tmp = path.join(h.config.paths.archiveRoot, '.store', 'tmp');
    await mkdir(packsDir, { recursive: true });
    await mkdir(tmp, { recursive: true });
    // Every object of at most 256 KiB moves into one of two packs; its own file goes.
    const moved: { id: string; bytes: Buffer; file: string }[] = [];
    for (const fanout of await readdir(objectsDir)) {
      for (const id of await readdir(path.join(objectsDir, fanout))) {
        const file = path.join(objectsDir, fanout, id);
        const bytes = await readFile(file);
        if (bytes.length <= 256 * 1024) moved.push({ id, bytes, file });
      }
    }
    expect(moved.length).toBeGreaterThan(20);
    const half = moved.length >> 1;
    const packs = [moved.slice(0, half), moved.slice(half)].map((part, i) => writePackSync(packsDir, path.join(tmp, `test-${i}`), part));
    for (const { file } of moved) await rm(file);
    const dest = path.join(await tempDir('read-archive'), 'tree');
    const extracted = reader(h, ['ws', 'extract', dest]);
    expect(extracted.code, extracted.stderr).toBe(0);
    expect(contentFacts(await describeTree(dest))).toEqual(contentFacts(source));
    // An index whose bytes were changed: its checksum no longer holds.
    const index = path.join(packsDir, `${packs[0]!.packId}.idx`);
    const bytes = await readFile(index);
    bytes.writeUInt8(bytes.readUInt8(30) ^ 1, 30);
    await chmod(index, 0o644);
    await writeFile(index, bytes);
    const refused = reader(h, ['ws', 'extract', path.join(await tempDir('read-archive'), 'tree')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('checksum mismatch');
  });

  it('a damaged object or tree, a missing revision and bad arguments are refused', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2' });
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'intact', 'dir/b.txt': 'also' });
    const { revision } = await h.persist('ws');
    const record = (await h.services.archive.readRecord('ws', revision!))!;
    const { lookupPath } = await import('../../src/archive/revision-reader.js');
    const node = (await lookupPath(h.services.archive.objects, record.root, Buffer.from('a.txt')))!;
    const object = h.services.archive.objects.objectPath((node as { object: string }).object);
    await chmod(object, 0o644);
    await writeFile(object, 'tamper');
    const out = await tempDir('read-archive');
    const damaged = reader(h, ['ws', 'extract', path.join(out, 'x')]);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toContain('does not match its id');
    await writeFile(h.services.archive.objects.treePath(record.root), '{"v":2,"e":[]}');
    expect(reader(h, ['ws', 'list']).stderr).toContain(`tree ${record.root} does not match its id`);
    expect(reader(h, ['ws', '--revision', 'r20200101T000000000Z-g1-gone00', 'list']).code).toBe(1);
    expect(reader(h, ['../etc', 'list']).code).toBe(2);
    expect(reader(h, ['ws', '--revision', '../../x', 'list']).code).toBe(2);
    await writeFile(path.join(out, 'file'), 'not a directory');
    expect(reader(h, ['ws', 'extract', path.join(out, 'file')]).code).toBe(2);
    // What the damaged extraction wrote stays inside its own (new) destination.
    expect((await readdir(out)).sort()).toEqual(['file', 'x']);
  });
});
