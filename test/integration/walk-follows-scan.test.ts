// A walk that follows a change scan still under way (store-builder.ts `#whileScanning`): the
// subdirectories the scan has finished are walked before it ends, a directory's own entries wait
// for the scan to leave it, and the tree built is the one a full walk finds. A directory replaced
// between its walk and its parent's is caught (`aheadMissed`), and a persist whose scan fails
// after the walk followed it walks again: a scan that lied and then complained loses nothing.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ObjectStore } from '../../src/archive/object-store.js';
import { ScanListing } from '../../src/archive/scan-listing.js';
import { StoreBuilder, type StoreBasis } from '../../src/archive/store-builder.js';
import { DirHandle } from '../../src/tree/dir-handle.js';
import { UNLIMITED_TREE } from '../../src/tree/tree-limits.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';
import { waitFor } from '../helpers/wait.js';
import { createHarness } from '../helpers/workspace-harness.js';

const record = (type: string, rel: string) => Buffer.from(`${type} ${rel}\0`, 'latin1');

// root/{a/{x.txt, a1/y.txt}, b/z.txt, c/w.txt, top.txt}
function plant(root: string): void {
  mkdirSync(path.join(root, 'a', 'a1'), { recursive: true });
  mkdirSync(path.join(root, 'b'));
  mkdirSync(path.join(root, 'c'));
  writeFileSync(path.join(root, 'a', 'x.txt'), 'x');
  writeFileSync(path.join(root, 'a', 'a1', 'y.txt'), 'y');
  writeFileSync(path.join(root, 'b', 'z.txt'), 'z');
  writeFileSync(path.join(root, 'c', 'w.txt'), 'w');
  writeFileSync(path.join(root, 'top.txt'), 'top');
}

async function setup() {
  const store = new ObjectStore(await tempDir('follow-store'));
  const live = await tempDir('follow-live');
  plant(live);
  const src = await DirHandle.open(live);
  addCleanup(() => src.close());
  const first = new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(60_000) });
  const basis: StoreBasis = { root: await first.build(src), changedAfterNs: 0n };
  const fullWalk = () => new StoreBuilder({ store, basis: null, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(60_000) }).build(src);
  // A walk that follows `listing`, as a persist's does.
  const following = (listing: ScanListing) =>
    new StoreBuilder({ store, basis, cache: null, keepMissing: false, limits: UNLIMITED_TREE, signal: AbortSignal.timeout(60_000), changed: listing, recordedDirs: first.dirIdentities });
  return { live, src, fullWalk, following };
}

describe('a walk following a scan under way', () => {
  it('walks the subdirectories the scan has finished before it ends, holds the rest, and builds what a full walk finds', async () => {
    const { live, src, fullWalk, following } = await setup();
    writeFileSync(path.join(live, 'a', 'x.txt'), 'x, changed');
    const listing = new ScanListing();
    const builder = following(listing);
    let built = false;
    const building = builder.build(src).then((root) => {
      built = true;
      return root;
    });
    // The scan is in `a`: nothing of it is finished.
    listing.push(Buffer.concat([record('u', ''), record('u', 'a'), record('f', 'a/x.txt'), record('u', 'a/a1')]));
    // It leaves `a` for `b`: `a` is walked (its changed file stored) while the scan goes on.
    listing.push(record('u', 'b'));
    await waitFor('the walk to store a/x.txt ahead of the scan', () => (builder.changedFiles === 1 ? true : undefined));
    // Caught up, it follows the scan into `b` (and waits there for the scan to leave it).
    await waitFor('the walk to follow the scan into b', () => (builder.dirIdentities.has('b') ? true : undefined));
    expect(built).toBe(false);
    listing.push(record('u', 'c'));
    expect(built).toBe(false);
    listing.end();
    const root = await building;
    expect(root).toBe(await fullWalk());
    expect(builder.aheadMissed).toBe(false);
    // `a` was walked as the scan finished it. The walk then followed the scan into `b` (it had
    // caught up with it), which the scan found unchanged: left to the root, which took it by id
    // with a/a1 and c. Only the root and `a` had their entries walked.
    expect([...builder.dirIdentities.keys()].sort()).toEqual(['a', 'b']);
    expect(builder.reusedDirs).toBe(3);
    expect(builder.listedDirs).toBe(2);
    expect(builder.changedFiles).toBe(1);
  });

  it('a directory replaced after its walk and before its parent\'s is caught, not taken for the one walked', async () => {
    const { live, src, following } = await setup();
    writeFileSync(path.join(live, 'a', 'x.txt'), 'x, changed');
    const listing = new ScanListing();
    const builder = following(listing);
    const building = builder.build(src);
    listing.push(Buffer.concat([record('u', ''), record('u', 'a'), record('f', 'a/x.txt'), record('u', 'a/a1'), record('u', 'b')]));
    await waitFor('the walk of a ahead of the scan', () => (builder.changedFiles === 1 ? true : undefined));
    renameSync(path.join(live, 'a'), path.join(live, 'a-walked'));
    mkdirSync(path.join(live, 'a'));
    writeFileSync(path.join(live, 'a', 'new.txt'), 'another directory');
    listing.push(record('u', 'c'));
    listing.end();
    await building;
    expect(builder.aheadMissed).toBe(true);
  });
});

describe('a persist whose scan fails after the walk followed it', () => {
  it('walks again: a find that says every directory is unchanged and then complains loses nothing', async () => {
    const shims = await tempDir('follow-shims');
    // Lists every directory as unchanged (what it would say of a tree that did not change), then complains.
    await writeFile(path.join(shims, 'find'), "#!/bin/sh\n/usr/bin/find -H \"$2\" -type d -printf 'u %P\\0'\necho 'find: something went missing' >&2\n");
    await chmod(path.join(shims, 'find'), 0o755);
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '2', PATH: `${shims}:${process.env.PATH ?? '/usr/bin:/bin'}` });
    await h.provision('ws');
    const root = h.live('ws');
    plant(root);
    await h.persist('ws');
    await mkdir(path.join(root, 'b', 'deeper'));
    await writeFile(path.join(root, 'b', 'deeper', 'new.txt'), 'made after the first persist');
    writeFileSync(path.join(root, 'a', 'a1', 'y.txt'), 'y, changed');
    const result = await h.persist('ws');
    // Every directory walked (the scan's answer was not believed), and both changes taken.
    expect(result.reusedDirectories ?? 0).toBe(0);
    const current = (await h.services.archive.current('ws'))!;
    const committed = (await h.services.archive.readRecord('ws', current))!.root;
    const src = await DirHandle.open(root);
    addCleanup(() => src.close());
    const full = new StoreBuilder({ store: h.services.archive.objects, basis: null, cache: null, keepMissing: false, limits: h.config.treeLimits, signal: AbortSignal.timeout(60_000) });
    expect(committed).toBe(await full.build(src));
  });
});
