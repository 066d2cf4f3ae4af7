// The restore through the host's tar (extract-revision.ts) on real directories makes exactly what
// materializeRevision makes: every entry type, mode (read-only directories, a setgid file as the archive keeps it), owner, size,
// content, file time to the nanosecond and hard link; large files (copied after the tar, several
// of one name in different directories, hard links to them too); a revision of many chunks byte for byte (the chunks are reused); names that are not UTF-8 as raw bytes; times before 1970; a damaged object fails typed; a tar that fails on its own falls back to materialising.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFile, chmod, link, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeTree } from '../helpers/store-tree.js';
import { extractRevision } from '../../src/archive/extract-revision.js';
import { materializeRevision } from '../../src/archive/materialize-revision.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import { lookupPath } from '../../src/archive/revision-reader.js';
import { TreeFormatError } from '../../src/archive/tree-object.js';
import { StorageIoError } from '../../src/errors/storage-io-error.js';
import { DirHandle } from '../../src/tree/dir-handle.js';

const SYSTEM_PATH = process.env.PATH ?? '/usr/bin:/bin';
// Past the ustar uid field (7 octal digits): it travels in the pax header.
const UID = 3_000_000;
let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fleet-extract-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

type Owner = { uid: number; gid: number } | undefined;

async function into<T>(dir: string, work: (handle: DirHandle) => Promise<T>): Promise<T> {
  await mkdir(dir, { mode: 0o700 });
  const handle = await DirHandle.open(dir);
  try {
    return await work(handle);
  } finally {
    await handle.close();
  }
}

const options = (owner: Owner, systemPath = SYSTEM_PATH) => ({ systemPath, signal: AbortSignal.timeout(60_000), timeoutMs: 60_000, ...(owner ? { owner } : {}) });

// Every entry beneath `dir`: type, mode, owner, size, content, target, file time in ns, and which names share an inode.
async function describeTree(dir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const inodes = new Map<bigint, string>();
  const visit = async (rel: string) => {
    for (const name of (await readdir(path.join(dir, rel))).sort()) {
      const relName = path.join(rel, name);
      const full = path.join(dir, relName);
      const st = await lstat(full, { bigint: true });
      const base = { mode: Number(st.mode & 0o7777n), uid: Number(st.uid), gid: Number(st.gid) };
      if (st.isDirectory()) {
        out[relName] = { type: 'd', ...base };
        await visit(relName);
      } else if (st.isSymbolicLink()) out[relName] = { type: 'l', uid: base.uid, target: await readlink(full) };
      else if (st.isFIFO()) out[relName] = { type: 'p', ...base, mtimeNs: String(st.mtimeNs) };
      else {
        const first = st.nlink > 1n ? inodes.get(st.ino) : undefined;
        if (st.nlink > 1n && !first) inodes.set(st.ino, relName);
        const content = await readFile(full);
        out[relName] = { type: 'f', ...base, size: Number(st.size), mtimeNs: String(st.mtimeNs), content: content.subarray(0, 32).toString('base64'), length: content.length, linkedTo: first ?? null };
      }
    }
  };
  await visit('');
  return out;
}

// A tree with every kind of entry the restore must make.
async function richTree(source: string): Promise<void> {
  await mkdir(path.join(source, 'dir/deeper'), { recursive: true });
  await mkdir(path.join(source, 'readonly/inner'), { recursive: true });
  await mkdir(path.join(source, 'empty-dir'));
  await writeFile(path.join(source, 'small.txt'), 'small');
  await writeFile(path.join(source, 'empty'), '');
  await writeFile(path.join(source, 'dir/large.bin'), Buffer.alloc(3 * 1024 * 1024, 7));
  await link(path.join(source, 'dir/large.bin'), path.join(source, 'large-link.bin'));
  await writeFile(path.join(source, 'dir/deeper/exec.sh'), '#!/bin/sh\n');
  await link(path.join(source, 'dir/deeper/exec.sh'), path.join(source, 'exec-link.sh'));
  await chmod(path.join(source, 'dir/deeper/exec.sh'), 0o751);
  await writeFile(path.join(source, 'readonly/inner/kept.txt'), 'in a read-only directory');
  await writeFile(path.join(source, 'readonly/big.bin'), Buffer.alloc(400 * 1024, 3));
  // Large files of one name in several directories.
  await writeFile(path.join(source, 'dir/deeper/large.bin'), Buffer.alloc(300 * 1024, 9));
  await writeFile(path.join(source, 'readonly/inner/large.bin'), randomBytes(500 * 1024));
  await writeFile(path.join(source, 'sgid'), 'setgid file');
  await chmod(path.join(source, 'sgid'), 0o2755);
  await writeFile(path.join(source, 'name with spaces and ünïcode'), 'x');
  await writeFile(path.join(source, `${'long-'.repeat(40)}name`), 'a name over 100 bytes');
  await mkdir(path.join(source, `${'deep-'.repeat(30)}dir`));
  await writeFile(path.join(source, `${'deep-'.repeat(30)}dir`, `${'x'.repeat(120)}`), 'a path over 255 bytes');
  await chmod(path.join(source, 'dir'), 0o750);
  await symlink('../../outside', path.join(source, 'dir/link'));
  await symlink('/etc/passwd', path.join(source, 'abs-link'));
  execFileSync('mkfifo', [path.join(source, 'fifo')]);
  execFileSync('find', [source, '-exec', 'touch', '-h', '-d', '@1700000000.123456789', '{}', '+']);
  await chmod(path.join(source, 'readonly/inner'), 0o555);
  await chmod(path.join(source, 'readonly'), 0o500);
}

describe('extractRevision', () => {
  for (const owner of [undefined, { uid: UID, gid: UID }] as Owner[]) {
    it(`makes exactly what materializeRevision makes (${owner ? 'owned by the workspace uid' : "owned by the fleet's user"})`, async () => {
      const source = path.join(root, 'source');
      await richTree(source);
      const store = new ObjectStore(path.join(root, 'archive'));
      const tree = await storeTree(store, source);

      const materialized = await into(path.join(root, 'materialized'), (dest) => materializeRevision(store, tree, dest, options(owner)));
      const extracted = await into(path.join(root, 'extracted'), (dest) => extractRevision(store, tree, dest, options(owner)));

      expect(extracted.via).toBe('tar');
      expect(extracted).toMatchObject({ files: materialized.files, directories: materialized.directories, bytes: materialized.bytes });
      const want = await describeTree(path.join(root, 'materialized'));
      const got = await describeTree(path.join(root, 'extracted'));
      expect(Object.keys(got).length).toBeGreaterThan(20);
      expect(got).toEqual(want);
      // Against the source too (modes, times, links): what materializeRevision is tested for.
      expect((got['dir/deeper/exec.sh'] as { mode: number }).mode).toBe(0o751);
      expect((got['readonly'] as { mode: number }).mode).toBe(0o500);
      expect((got['exec-link.sh'] as { linkedTo: string }).linkedTo).toBe('dir/deeper/exec.sh');
      expect((got['large-link.bin'] as { linkedTo: string | null }).linkedTo ?? (got['dir/large.bin'] as { linkedTo: string | null }).linkedTo).not.toBeNull();
      expect((got['small.txt'] as { mtimeNs: string }).mtimeNs).toBe('1700000000123456000');
      if (owner) expect(Object.values(got).every((entry) => (entry as { uid: number }).uid === UID)).toBe(true);
      expect((await lstat(path.join(root, 'extracted'))).uid).toBe(owner ? UID : process.getuid!());
    });
  }

  it('with an owner, tar runs as the owner (no root process writes into the staging tree but the fleet itself)', async () => {
    const source = path.join(root, 'source');
    await richTree(source);
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    // A wrapper the owner can run, in a directory it can reach, noting who runs it.
    const bin = await mkdtemp(path.join(tmpdir(), 'fleet-tar-as-'));
    try {
      await chmod(bin, 0o777);
      const real = execFileSync('sh', ['-c', 'command -v tar']).toString().trim();
      await writeFile(path.join(bin, 'tar'), `#!/bin/sh\nid -u > ${bin}/uid; id -G > ${bin}/groups\nexec ${real} "$@"\n`, { mode: 0o755 });
      const owner = { uid: UID, gid: UID };
      const extracted = await into(path.join(root, 'extracted'), (dest) => extractRevision(store, tree, dest, options(owner, `${bin}:${SYSTEM_PATH}`)));
      expect(extracted.via).toBe('tar');
      expect((await readFile(path.join(bin, 'uid'), 'utf8')).trim()).toBe(String(UID));
      expect((await readFile(path.join(bin, 'groups'), 'utf8')).trim()).toBe(String(UID));
      await into(path.join(root, 'materialized'), (dest) => materializeRevision(store, tree, dest, options(owner)));
      expect(await describeTree(path.join(root, 'extracted'))).toEqual(await describeTree(path.join(root, 'materialized')));
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('a revision of many chunks arrives byte for byte, though its chunks are reused once tar has them', async () => {
    // 1,200 files of distinct content, 36 MB: ~140 chunks of 256 KiB through the pipe, a handful of buffers.
    const source = path.join(root, 'source');
    const sizes = [1, 511, 4096, 20_000, 60_000, 250_000];
    const files = Array.from({ length: 1200 }, (_, i) => ({ name: `d${i % 7}/f${i}`, bytes: randomBytes(sizes[i % sizes.length]!) }));
    for (let d = 0; d < 7; d++) await mkdir(path.join(source, `d${d}`), { recursive: true });
    for (const f of files) await writeFile(path.join(source, f.name), f.bytes);
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);

    // A tar that starts reading late: the first chunks wait in the pipe while the walk goes on (a chunk reused too early would then be overwritten).
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'tar'), `#!/bin/sh\nsleep 0.3\nexec ${execFileSync('sh', ['-c', 'command -v tar']).toString().trim()} "$@"\n`, { mode: 0o755 });
    const extracted = await into(path.join(root, 'extracted'), (dest) => extractRevision(store, tree, dest, options(undefined, `${bin}:${SYSTEM_PATH}`)));

    expect(extracted).toMatchObject({ via: 'tar', files: files.length });
    for (const f of files) {
      const got = await readFile(path.join(root, 'extracted', f.name));
      expect(got.equals(f.bytes), f.name).toBe(true);
    }
  });

  it('names and symlink targets that are not UTF-8 go through tar as raw bytes', async () => {
    const source = path.join(root, 'source');
    await mkdir(source);
    const raw = (text: string, bytes: number[]) => Buffer.concat([Buffer.from(text), Buffer.from(bytes)]);
    await writeFile(raw(`${source}/`, [0x66, 0xff, 0xfe, 0x0a, 0x78]), 'latin-1 bytes and a newline');
    await symlink(raw('../', [0xff, 0x80]), raw(`${source}/link-`, [0xc3]));
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    const extracted = await into(path.join(root, 'extracted'), (dest) => extractRevision(store, tree, dest, options(undefined)));
    expect(extracted.via).toBe('tar');
    const names = (await readdir(path.join(root, 'extracted'), { encoding: 'buffer' })).map((name) => name.toString('hex')).sort();
    expect(names).toEqual([Buffer.from([0x66, 0xff, 0xfe, 0x0a, 0x78]).toString('hex'), raw('link-', [0xc3]).toString('hex')].sort());
    expect((await readlink(raw(`${root}/extracted/link-`, [0xc3]), { encoding: 'buffer' })).toString('hex')).toBe(raw('../', [0xff, 0x80]).toString('hex'));
    expect(await readFile(raw(`${root}/extracted/`, [0x66, 0xff, 0xfe, 0x0a, 0x78]), 'utf8')).toBe('latin-1 bytes and a newline');
  });

  it('a file time before 1970 goes through tar as materializeRevision sets it', async () => {
    const source = path.join(root, 'source');
    await mkdir(source);
    await writeFile(path.join(source, 'old.txt'), 'from 1969');
    await writeFile(path.join(source, 'older.txt'), 'from 1969, half a second in');
    // Node's utimes takes a negative time as now; touch sets it.
    execFileSync('touch', ['-d', '@-86400', path.join(source, 'old.txt')]);
    execFileSync('touch', ['-d', '@-86399.5', path.join(source, 'older.txt')]);
    expect((await lstat(path.join(source, 'old.txt'), { bigint: true })).mtimeNs).toBeLessThan(0n);
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    const extracted = await into(path.join(root, 'extracted'), (dest) => extractRevision(store, tree, dest, options(undefined)));
    expect(extracted.via).toBe('tar');
    await into(path.join(root, 'materialized'), (dest) => materializeRevision(store, tree, dest, options(undefined)));
    const got = await describeTree(path.join(root, 'extracted'));
    expect(got).toEqual(await describeTree(path.join(root, 'materialized')));
    expect((got['old.txt'] as { mtimeNs: string }).mtimeNs).toBe('-86400000000000');
  });

  // A source of the given files stored, and the object of `name` made writable for the test to damage.
  async function storedWithObject(files: Record<string, string>, name: string) {
    const source = path.join(root, 'source');
    await mkdir(source);
    for (const [file, content] of Object.entries(files)) await writeFile(path.join(source, file), content);
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    const node = await lookupPath(store, tree, Buffer.from(name));
    if (node?.type !== 'f') throw new Error(`${name} not stored as a file`);
    const object = store.objectPath(node.object);
    await chmod(object, 0o644);
    const extract = () => into(path.join(root, 'dest'), (handle) => extractRevision(store, tree, handle, options(undefined))).catch((e: unknown) => e);
    return { object, extract };
  }

  it('an object shorter than its tree says fails typed, naming the object', async () => {
    const { object, extract } = await storedWithObject({ 'a.txt': 'a'.repeat(1000), 'b.txt': 'b'.repeat(1000) }, 'b.txt');
    await truncate(object, 10);
    const error = await extract();
    expect(error).toBeInstanceOf(StorageIoError);
    expect((error as StorageIoError).message).toContain('its tree says 1000');
    expect((error as StorageIoError).context).toMatchObject({ path: object });
  });

  it('an object longer than its tree says fails typed too (the byte read past the content, in the tar chunk, shows it)', async () => {
    const { object, extract } = await storedWithObject({ 'a.txt': 'a'.repeat(512) }, 'a.txt');
    await appendFile(object, 'x');
    const error = await extract();
    expect(error).toBeInstanceOf(StorageIoError);
    expect((error as StorageIoError).message).toContain('object holds more than 512 bytes, its tree says 512');
  });

  it('a large file whose object is short fails the restore typed (not materialised instead), and nothing writes after', async () => {
    const big = 'b'.repeat(300 * 1024);
    const files: Record<string, string> = { 'a.txt': 'a'.repeat(1000), 'b.bin': big };
    for (let i = 0; i < 12; i++) files[`c${i}.bin`] = `${i}`.repeat(300 * 1024);
    const { object, extract } = await storedWithObject(files, 'b.bin');
    await truncate(object, 4096);
    const error = await extract();
    expect(error).toBeInstanceOf(StorageIoError);
    expect((error as StorageIoError).message).toContain(`its tree says ${big.length}`);
    // Nothing writes into the staging tree after the restore has failed: what it holds now stays.
    const listing = () => execFileSync('find', [path.join(root, 'dest'), '-printf', '%p %s\\n']).toString();
    const after = listing();
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(Array.from({ length: 8 }, () => lstat(path.join(root, 'dest'))));
    expect(listing()).toBe(after);
  });

  // The plan reads every tree before tar starts (synchronously): a damaged or missing one fails the restore there, and nothing is made.
  for (const damage of ['damaged', 'missing'] as const) {
    it(`a ${damage} tree fails the restore before tar makes anything (${damage === 'damaged' ? 'TreeFormatError' : 'ENOENT'}), in a fresh store`, async () => {
      const source = path.join(root, 'source');
      await mkdir(path.join(source, 'a/b'), { recursive: true });
      await writeFile(path.join(source, 'top.txt'), 'top');
      await writeFile(path.join(source, 'a/b/deep.txt'), 'deep');
      const tree = await storeTree(new ObjectStore(path.join(root, 'archive')), source);
      const store = new ObjectStore(path.join(root, 'archive'));
      const node = await lookupPath(store, tree, Buffer.from('a/b'));
      if (node?.type !== 'd') throw new Error('a/b not stored as a directory');
      const treeFile = store.treePath(node.tree);
      await chmod(treeFile, 0o644);
      if (damage === 'damaged') await writeFile(treeFile, '{"v":2,"e":[]}');
      else await rm(treeFile);
      // A store that has not read the trees yet (lookupPath cached them in the one above).
      const error = await into(path.join(root, 'dest'), (handle) => extractRevision(new ObjectStore(path.join(root, 'archive')), tree, handle, options(undefined))).catch((e: unknown) => e);
      if (damage === 'damaged') expect(error).toBeInstanceOf(TreeFormatError);
      else expect(error).toMatchObject({ code: 'ENOENT' });
      expect(await readdir(path.join(root, 'dest'))).toEqual([]);
    });
  }

  it('a tar that fails on its own (here: none on PATH that extracts) falls back to materialising, and says why', async () => {
    const source = path.join(root, 'source');
    await richTree(source);
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    // A `tar` that reads a little and fails, the way a full disk makes GNU tar exit 2 midway.
    const bin = path.join(root, 'bin');
    await mkdir(bin);
    await writeFile(path.join(bin, 'tar'), '#!/bin/sh\nhead -c 4096 > /dev/null\necho "tar: simulated failure" >&2\nexit 2\n', { mode: 0o755 });
    const extracted = await into(path.join(root, 'extracted'), (dest) => extractRevision(store, tree, dest, options(undefined, `${bin}:${SYSTEM_PATH}`)));
    expect(extracted.via).toBe('materialize');
    expect(extracted.tarFailure).toContain('tar exited 2');
    expect(extracted.tarFailure).toContain('simulated failure');
    await into(path.join(root, 'materialized'), (dest) => materializeRevision(store, tree, dest, options(undefined)));
    expect(await describeTree(path.join(root, 'extracted'))).toEqual(await describeTree(path.join(root, 'materialized')));
  });

  it('no tar on PATH: the revision is materialised, and the failure says tar did not start', async () => {
    const source = path.join(root, 'source');
    await mkdir(path.join(source, 'dir'), { recursive: true });
    await writeFile(path.join(source, 'dir/a.txt'), 'a');
    await symlink('a.txt', path.join(source, 'dir/link'));
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    const empty = path.join(root, 'empty-bin');
    await mkdir(empty);
    const extracted = await into(path.join(root, 'extracted'), (dest) => extractRevision(store, tree, dest, options(undefined, empty)));
    expect(extracted.via).toBe('materialize');
    expect(extracted.tarFailure).toMatch(/^tar did not start/);
    await into(path.join(root, 'materialized'), (dest) => materializeRevision(store, tree, dest, options(undefined)));
    expect(await describeTree(path.join(root, 'extracted'))).toEqual(await describeTree(path.join(root, 'materialized')));
  });
});
