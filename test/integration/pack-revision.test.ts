// The Vercel import archive packed straight from a format 2 revision (pack-revision.ts) unpacks,
// with the host's GNU tar as the sandbox runs it, into exactly what the materialise-then-tar path
// gave: every entry type, mode, size, content and file time to the nanosecond; a name that is not
// UTF-8 is left to that path (null); a damaged object and the size cap fail with typed errors.
import { execFileSync } from 'node:child_process';
import { chmod, link, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeTree } from '../helpers/store-tree.js';
import { materializeRevision } from '../../src/archive/materialize-revision.js';
import { ObjectStore } from '../../src/archive/object-store.js';
import { lookupPath } from '../../src/archive/revision-reader.js';
import { StorageIoError } from '../../src/errors/storage-io-error.js';
import { ProviderPermanentError } from '../../src/providers/provider-errors.js';
import { packRevisionObjects } from '../../src/providers/vercel/pack-revision.js';
import { packTree } from '../../src/providers/vercel/pack-tree.js';
import { DirHandle } from '../../src/tree/dir-handle.js';

const SYSTEM_PATH = process.env.PATH ?? '/usr/bin:/bin';
const signal = () => AbortSignal.timeout(60_000);
let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fleet-pack-revision-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

// The old path: materialise into a fresh directory, then the host's tar.
async function packByTar(store: ObjectStore, tree: string): Promise<Buffer> {
  const dir = await mkdtemp(path.join(root, 'materialized-'));
  const dest = await DirHandle.open(dir);
  try {
    await materializeRevision(store, tree, dest, { systemPath: SYSTEM_PATH, signal: signal() });
  } finally {
    await dest.close();
  }
  return packTree(dir, signal(), SYSTEM_PATH);
}

// Unpacks as the sandbox's import script does.
async function unpack(archive: Buffer, name: string): Promise<string> {
  const file = path.join(root, `${name}.tgz`);
  await writeFile(file, archive);
  const dir = path.join(root, name);
  await mkdir(dir);
  execFileSync('tar', ['-xzpf', file, '--no-same-owner', '-C', dir]);
  return dir;
}

// Every entry beneath `dir`: type, mode, size, content hash or target, file times in ns.
async function describeTree(dir: string, rel = ''): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of (await readdir(path.join(dir, rel))).sort()) {
    const relName = path.join(rel, name);
    const full = path.join(dir, relName);
    const st = await lstat(full, { bigint: true });
    const mode = Number(st.mode & 0o7777n);
    if (st.isDirectory()) {
      out[relName] = { type: 'd', mode };
      Object.assign(out, await describeTree(dir, relName));
    } else if (st.isSymbolicLink()) out[relName] = { type: 'l', target: await readlink(full) };
    else if (st.isFIFO()) out[relName] = { type: 'p', mode, mtimeNs: String(st.mtimeNs) };
    else out[relName] = { type: 'f', mode, size: Number(st.size), mtimeNs: String(st.mtimeNs), content: (await readFile(full)).toString('base64').slice(0, 64) + (await readFile(full)).length };
  }
  return out;
}

describe('packRevisionObjects', () => {
  it('unpacks into what materialise-then-tar gave: types, modes, sizes, contents, times, hard links as files', async () => {
    const source = path.join(root, 'source');
    await mkdir(path.join(source, 'src/deep/er'), { recursive: true });
    await mkdir(path.join(source, 'empty'));
    await mkdir(path.join(source, 'locked'), { mode: 0o750 });
    await chmod(path.join(source, 'locked'), 0o750);
    await writeFile(path.join(source, 'a.txt'), 'alpha\n');
    await writeFile(path.join(source, 'zero'), '');
    await writeFile(path.join(source, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await chmod(path.join(source, 'run.sh'), 0o755);
    await writeFile(path.join(source, 'src/deep/er/big.bin'), Buffer.alloc(700_000, 7));
    await writeFile(path.join(source, 'src/ünïcödé name.txt'), 'utf-8 names are fine');
    await writeFile(path.join(source, `src/${'long-'.repeat(40)}name.txt`), 'a name over 100 bytes (pax path)');
    await writeFile(path.join(source, 'locked/secret'), 'x', { mode: 0o600 });
    await chmod(path.join(source, 'locked/secret'), 0o600);
    await link(path.join(source, 'a.txt'), path.join(source, 'src/hard-link'));
    await symlink('../a.txt', path.join(source, 'src/link'));
    await symlink('/etc/passwd', path.join(source, 'abs-link'));
    execFileSync('mkfifo', ['-m', '0640', path.join(source, 'pipe')]);
    // Times with nanoseconds and from long ago.
    await utimes(path.join(source, 'a.txt'), 1_700_000_000.123456, 1_700_000_000.123456);
    await utimes(path.join(source, 'zero'), 86_400, 86_400);

    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    const streamed = await packRevisionObjects(store, tree, { maxBytes: 1024 ** 3 }, signal());
    expect(streamed).not.toBeNull();
    const viaObjects = await describeTree(await unpack(streamed!, 'from-objects'));
    const viaTar = await describeTree(await unpack(await packByTar(store, tree), 'from-tar'));
    expect(viaObjects).toEqual(viaTar);
    expect(Object.keys(viaObjects)).toHaveLength(16);
    expect(viaObjects['src/hard-link']).toMatchObject({ type: 'f', size: 6 });
    expect(viaObjects['a.txt']).toMatchObject({ mtimeNs: '1700000000123456000' });
    expect(viaObjects['locked']).toEqual({ type: 'd', mode: 0o750 });
    expect(viaObjects['pipe']).toMatchObject({ type: 'p', mode: 0o640 });
  });

  it('leaves a name that is not UTF-8 to the materialise-then-tar path (null)', async () => {
    const source = path.join(root, 'source');
    await mkdir(source);
    await writeFile(Buffer.concat([Buffer.from(source), Buffer.from('/bad-\xff-name', 'latin1')]), 'bytes');
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);
    expect(await packRevisionObjects(store, tree, { maxBytes: 1024 ** 3 }, signal())).toBeNull();
  });

  it('refuses a damaged object (StorageIo naming it) and an archive over the cap (permanent)', async () => {
    const source = path.join(root, 'source');
    await mkdir(source);
    await writeFile(path.join(source, 'file'), Buffer.alloc(50_000, 1));
    const store = new ObjectStore(path.join(root, 'archive'));
    const tree = await storeTree(store, source);

    const capped = await packRevisionObjects(store, tree, { maxBytes: 10 }, signal()).catch((e: unknown) => e);
    expect(capped).toBeInstanceOf(ProviderPermanentError);
    expect((capped as Error).message).toMatch(/exceeds 10 bytes/);

    const node = await lookupPath(store, tree, Buffer.from('file'));
    const object = store.objectPath((node as { object: string }).object);
    await chmod(object, 0o644);
    await truncate(object, 1_000);
    const short = await packRevisionObjects(store, tree, { maxBytes: 1024 ** 3 }, signal()).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(StorageIoError);
    expect((short as Error).message).toMatch(/holds 1000 bytes, its tree says 50000/);
  });
});
