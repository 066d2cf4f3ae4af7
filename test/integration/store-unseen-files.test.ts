// A first persist does not lstat the files its listing says are regular (their stat comes from
// the descriptor it opens). What a sandbox does between that listing and the open is hostile: a
// name swapped for a symlink, a directory, a FIFO or a socket is dropped as vanished (nothing followed,
// nothing read through it), a file grown past the small-file size or given a second name is
// stored the streaming way, and everything else is stored as it is.
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/archive/object-store.js';
import { StoreBuilder } from '../../src/archive/store-builder.js';
import type { FileNode, TreeNode } from '../../src/archive/tree-object.js';
import { sha256 } from '../../src/archive/tree-object.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { UNLIMITED_TREE } from '../../src/tree/tree-limits.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';

async function build(source: string, between?: () => void) {
  const store = new ObjectStore(await tempDir('unseen-store'));
  const src = await DirHandle.open(source);
  addCleanup(() => src.close());
  // Counts the root's lstats, and runs `between` right after the root is listed (before any open).
  const lstats: string[] = [];
  const lstatSync = src.lstatSync.bind(src);
  src.lstatSync = (name) => {
    lstats.push(name.toString());
    return lstatSync(name);
  };
  const namesSync = src.namesSync.bind(src);
  src.namesSync = (...args) => {
    const names = namesSync(...args);
    between?.();
    return names;
  };
  const builder = new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(60_000) });
  const root = await builder.build(src);
  const nodes = new Map<string, TreeNode>((await store.readTree(root)).map((n) => [n.name.toString(), n]));
  const objects = (await readdir(store.kindDir('object'), { recursive: true })).filter((f) => f.length > 3).map((f) => path.basename(f));
  return { builder, nodes, lstats, objects, store };
}

describe('a first persist of files it has not lstat-ed', () => {
  it('stats only the entries its listing does not say are regular files', async () => {
    const source = await tempDir('unseen-src');
    for (let i = 0; i < 20; i++) writeFileSync(path.join(source, `f${i}`), `file ${i}`);
    mkdirSync(path.join(source, 'dir'));
    writeFileSync(path.join(source, 'dir', 'inner'), 'inner');
    symlinkSync('f1', path.join(source, 'link'));
    execFileSync('mkfifo', [path.join(source, 'fifo')]);
    const { builder, nodes, lstats } = await build(source);
    expect(lstats.sort()).toEqual(['dir', 'fifo', 'link']);
    expect(builder.files).toBe(21);
    expect(nodes.get('f7')).toMatchObject({ type: 'f', size: 6, object: sha256(Buffer.from('file 7')), mode: 0o644 });
    expect(nodes.get('link')).toMatchObject({ type: 'l', target: Buffer.from('f1') });
    expect(nodes.get('fifo')).toMatchObject({ type: 'p' });
    expect(builder.cacheEntries.map((e) => e.path).sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `f${i}`), 'dir/inner'].sort());
  });

  it('a name swapped after the listing is dropped or stored for what it is when opened, never followed', async () => {
    const source = await tempDir('unseen-src');
    const outside = await tempDir('unseen-outside');
    writeFileSync(path.join(outside, 'secret'), 'host secret');
    for (const name of ['to-symlink', 'to-dir', 'to-fifo', 'to-socket', 'grows', 'linked', 'plain']) writeFileSync(path.join(source, name), `was ${name}`);
    writeFileSync(path.join(source, 'setuid'), 'mode bits');
    const big = Buffer.alloc(100_000, 7);
    const { builder, nodes, objects } = await build(source, () => {
      unlinkSync(path.join(source, 'to-symlink'));
      symlinkSync(path.join(outside, 'secret'), path.join(source, 'to-symlink'));
      unlinkSync(path.join(source, 'to-dir'));
      mkdirSync(path.join(source, 'to-dir'));
      writeFileSync(path.join(source, 'to-dir', 'inside'), 'inside');
      unlinkSync(path.join(source, 'to-fifo'));
      execFileSync('mkfifo', [path.join(source, 'to-fifo')]);
      unlinkSync(path.join(source, 'to-socket'));
      execFileSync('python3', ['-c', 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', path.join(source, 'to-socket')]);
      writeFileSync(path.join(source, 'grows.tmp'), big);
      renameSync(path.join(source, 'grows.tmp'), path.join(source, 'grows'));
      linkSync(path.join(source, 'linked'), path.join(outside, 'second-name'));
      execFileSync('chmod', ['4755', path.join(source, 'setuid')]);
    });
    expect([...nodes.keys()].sort()).toEqual(['grows', 'linked', 'plain', 'setuid']);
    expect(builder.tally.vanished).toBe(4);
    expect(objects).not.toContain(sha256(Buffer.from('host secret')));
    expect(objects).not.toContain(sha256(Buffer.from('inside')));
    expect(nodes.get('grows')).toMatchObject({ type: 'f', size: 100_000, object: sha256(big) });
    // Two names now (one outside the tree): read once, the streaming way, grouped by inode.
    expect((nodes.get('linked') as FileNode).object).toBe(sha256(Buffer.from('was linked')));
    expect(nodes.get('plain')).toMatchObject({ object: sha256(Buffer.from('was plain')) });
    // Its mode is the open file's, the set-id bit stripped and counted.
    expect(nodes.get('setuid')).toMatchObject({ mode: 0o755 });
    expect(builder.tally.strippedModes).toBe(1);
  });
});
