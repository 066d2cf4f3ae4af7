// Disk trouble on the archive is a typed, retryable failure that leaves the previous revision
// current and no litter: the archive root lives on a small tmpfs that fills up (ENOSPC) and is
// then remounted read-only (EROFS). Needs root (mount); the CI runs as root.
import { execFileSync } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyRevisions } from '../../src/archive/verify-revisions.js';
import { archivedText } from '../helpers/archived.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir } from '../helpers/fleet-env.js';
import { rng } from '../helpers/rng.js';
import { createHarness, rejectsWith } from '../helpers/workspace-harness.js';

const isRoot = process.getuid?.() === 0;

// A tmpfs of `size` mounted at a fresh directory, unmounted when the test ends.
async function smallFilesystem(size: string): Promise<string> {
  const dir = await tempDir('small-fs');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  addCleanup(() => void execFileSync('umount', ['-l', dir]));
  return dir;
}

describe('storage errors', () => {
  it.skipIf(!isRoot)('a full or read-only archive fails the persist typed and retryable, keeps the last revision current, leaves no litter', async () => {
    const archiveRoot = await smallFilesystem('4m');
    const h = await createHarness({ FLEET_ARCHIVE_ROOT: archiveRoot });
    await h.provision('ws');
    await h.write('ws', { 'notes.txt': 'small' });
    const first = await h.persist('ws');
    const revs = h.services.archive.paths('ws').revs;

    // ENOSPC: a file larger than the filesystem.
    await h.write('ws', { 'big.bin': rng(7_200).bytes(6 * 1024 * 1024) });
    const full = await rejectsWith(h.persist('ws'), 'DiskFull');
    expect(full).toMatchObject({ retryable: true, errno: 'ENOSPC', name: 'DiskFullError' });
    expect((full as unknown as { path: string }).path).toContain('big.bin');
    expect(await h.services.archive.current('ws')).toBe(first.revision);
    expect((await readdir(revs)).filter((n) => n.includes('.tmp-'))).toEqual([]);
    // Format 2 writes objects through the store's tmp/: the failed one is gone too.
    expect(await h.services.archive.storeTemps()).toEqual([]);
    const verified = await verifyRevisions({ archive: h.services.archive, history: h.services.checkpoints }, ['ws']);
    expect(verified.problems).toEqual([]);

    // Space comes back: the next persist succeeds.
    await rm(path.join(h.live('ws'), 'big.bin'));
    await h.write('ws', { 'notes.txt': 'small, edited' });
    const second = await h.persist('ws');
    expect(await archivedText(h.services.archive, 'ws', 'notes.txt', second.revision!)).toBe('small, edited');

    // EROFS: the kernel (or an operator) remounted the archive read-only.
    execFileSync('mount', ['-o', 'remount,ro', archiveRoot]);
    await h.write('ws', { 'notes.txt': 'edited again' });
    const readOnly = await rejectsWith(h.persist('ws'), 'ReadOnlyStorage');
    expect(readOnly).toMatchObject({ retryable: true, errno: 'EROFS' });
    execFileSync('mount', ['-o', 'remount,rw', archiveRoot]);
    expect(await h.services.archive.current('ws')).toBe(second.revision);
    expect((await h.persist('ws')).unchanged).toBe(false);
  });
});
