// A hostile tree in a Vercel sandbox (the real @vercel/sandbox SDK against the loopback stand-in,
// whose commands really run): links out of the tree and into another workspace's archive, odd
// names, FIFOs, sparse files and hard links go through the tar export, the untrusting extract and
// the persist copier in both modes, then a restore. Nothing from outside is archived or touched.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyRevisions } from '../../src/archive/verify-revisions.js';
import { tempDir } from '../helpers/fleet-env.js';
import { archiveHolds, treeFacts } from '../helpers/hostile-tree.js';
import { createVercelHarness, vercelShell } from '../helpers/vercel-harness.js';

const CANARY = `CANARY-VERCEL-${process.pid}-${Date.now()}`;

describe('hostile tree on Vercel (stand-in)', () => {
  it('links out, links into another workspace, odd names, FIFOs, sparse files and hard links: both persist modes and a restore', { timeout: 120_000 }, async () => {
    // Format 1 (this test reads revisions as directories and manifests); vercel-delta.test.ts covers format 2.
    const { h } = await createVercelHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    const outside = await tempDir('outside');
    await writeFile(path.join(outside, 'secret.txt'), CANARY);
    await mkdir(path.join(outside, 'sub'));
    await writeFile(path.join(outside, 'sub', 'keep.txt'), CANARY);
    const vercel = h.services.providers.get('vercel');
    const { provision, sh } = vercelShell(h);

    const victim = await provision('victim');
    await sh(victim.handle, 'echo victim > notes.txt');
    await h.persist('victim');
    const victimArchive = h.services.archive.paths('victim').dir;
    const before = { victim: await treeFacts(victimArchive), outside: await treeFacts(outside) };

    const attacker = await provision('attacker');
    await sh(attacker.handle, 'mkdir -p x/src && echo evil > x/src/evil.txt');
    await h.persist('attacker');
    await sh(
      attacker.handle,
      [
        'rm -rf x && ln -s ../../../victim/current x',
        `ln -s ${h.services.archive.paths('victim').current} victim-current && ln -s ${outside} outside-dir && ln -s ${outside}/secret.txt secret`,
        `ln -s ${'../'.repeat(16)}${outside.slice(1)}/secret.txt rel-secret && ln -s loop-b loop-a && ln -s loop-a loop-b`,
        "mkfifo pipe && printf a > ./-rf && printf b > \"$(printf 'new\\nline')\" && printf c > 'back\\slash'",
        'echo one > hard-a && ln hard-a hard-b && truncate -s 64M sparse.bin && printf tail >> sparse.bin',
      ].join(' && '),
    );
    const checkpoint = await h.persist('attacker', { delete: false, reason: 'checkpoint' });
    expect(checkpoint.unchanged).toBe(false);
    await sh(attacker.handle, "rm 'back\\slash'");
    const turnEnd = await h.persist('attacker');
    expect(turnEnd).toMatchObject({ unchanged: false, deletedFiles: 1 });
    const current = (await h.services.archive.readManifest('attacker', (await h.services.archive.current('attacker'))!))!;
    const entries = new Map(current.entries.map((e) => [e.p, e]));
    expect(entries.get('x')).toMatchObject({ t: 'l', l: '../../../victim/current' });
    expect(entries.get('outside-dir')).toMatchObject({ t: 'l', l: outside });
    expect(entries.get('new\nline')).toMatchObject({ t: 'f' });
    expect(entries.get('hard-b')).toMatchObject({ t: 'f', s: 4 });
    expect(entries.get('sparse.bin')).toMatchObject({ t: 'f', s: 64 * 1024 * 1024 + 4 });
    expect(entries.has('x/src/evil.txt')).toBe(false);

    expect(await treeFacts(victimArchive)).toBe(before.victim);
    expect(await treeFacts(outside)).toBe(before.outside);
    expect(await readdir(outside)).toEqual(['secret.txt', 'sub']);
    expect(archiveHolds(h.config.paths.archiveRoot, CANARY)).toBe(false);
    for (const ws of ['victim', 'attacker']) expect((await verifyRevisions({ archive: h.services.archive, history: h.services.checkpoints }, [ws])).problems).toEqual([]);

    // The sandbox dies; a new one is restored from the archive with the links verbatim.
    await vercel.destroy(attacker.handle, AbortSignal.timeout(30_000));
    const restored = await provision('attacker');
    expect(restored.outcome).toBe('restored');
    expect(await sh(restored.handle, 'readlink x; cat ./-rf; cat hard-b; wc -c < sparse.bin')).toBe(`../../../victim/current\naone\n${64 * 1024 * 1024 + 4}\n`);
    expect(await treeFacts(outside)).toBe(before.outside);
    expect(await treeFacts(victimArchive)).toBe(before.victim);
  });
});
