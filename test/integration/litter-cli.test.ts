// `fleet gc --kind litter` (a real bin/fleet.js process; the gc job runs on an in-process
// worker) collects every temporary a killed persist leaves: temporary revision directories,
// `*.manifest.json.tmp-*` files and `current.tmp-*` links, once older than the grace period
// (the persist deadline); younger ones may belong to a running persist and stay. Mtimes are
// backdated, never waited for. Run `npm run build` first. The temporaries are format 1's
// (revision directories and manifests), so the harness pins FLEET_ARCHIVE_FORMAT=1.
import { lstat, lutimes, mkdir, readdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GcResult } from '../../src/gc/run-gc.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { runFleet, cliJson } from '../helpers/processes.js';
import { createHarness } from '../helpers/workspace-harness.js';

const exists = (p: string) => lstat(p).then(() => true, () => false);
const longAgo = () => new Date(Date.now() - 48 * 3_600_000);

describe('fleet gc --kind litter', () => {
  it('collects manifest temps, current-link temps and temporary revisions past the grace period; keeps young ones, current and attached revisions', async () => {
    const h = await createHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    await h.provision('ws');
    await h.write('ws', { 'a.txt': 'a' });
    const first = (await h.persist('ws')).revision!;
    await h.write('ws', { 'b.txt': 'b' });
    const head = (await h.persist('ws')).revision!;
    const paths = h.services.archive.paths('ws');
    // The names a killed persist leaves (as every version of the fleet wrote them).
    const old = {
      manifest: path.join(paths.revs, `${head}.manifest.json.tmp-1a2b3c4d`),
      current: path.join(paths.dir, 'current.tmp-1a2b3c4d'),
      revision: path.join(paths.revs, '.tmp-r20200101T000000000Z-g1-oldold'),
    };
    const young = {
      manifest: path.join(paths.revs, `${head}.manifest.json.tmp-5e6f7a8b`),
      current: path.join(paths.dir, 'current.tmp-5e6f7a8b'),
      revision: path.join(paths.revs, '.tmp-r20990101T000000000Z-g1-young1'),
    };
    for (const set of [old, young]) {
      await writeFile(set.manifest, '{"format":1,"entr');
      await symlink(paths.currentTarget(head), set.current);
      await mkdir(set.revision);
      await writeFile(path.join(set.revision, 'partial'), 'x'.repeat(100));
    }
    await utimes(old.manifest, longAgo(), longAgo());
    await lutimes(old.current, longAgo(), longAgo());
    await utimes(old.revision, longAgo(), longAgo());
    // An attached revision whose manifest was lost is damage for `fleet verify`, not litter.
    await rm(paths.manifest(first));
    await utimes(paths.revision(first), longAgo(), longAgo());

    await testWorkers(h.config, ['gc']);
    const gc = async (dryRun: boolean) => {
      const run = await runFleet(['gc', '--kind', 'litter', '--json', ...(dryRun ? ['--dry-run'] : [])], h.env);
      expect(run.code, run.stderr).toBe(0);
      return (cliJson(run.stdout) as { results: GcResult[] }).results[0]!;
    };
    const dry = await gc(true);
    expect(dry.items.map((i) => i.id).sort()).toEqual(Object.values(old).sort());
    expect(dry.items.find((i) => i.id === old.manifest)).toMatchObject({ description: expect.stringContaining('temporary manifest'), bytes: 17 });
    expect(dry.items.find((i) => i.id === old.current)).toMatchObject({ description: expect.stringContaining('temporary current link'), bytes: 0 });
    for (const p of Object.values(old)) expect(await exists(p), p).toBe(true);

    const real = await gc(false);
    expect(real.items.map((i) => i.id).sort()).toEqual(Object.values(old).sort());
    expect(real.bytes).toBe(dry.bytes);
    for (const p of Object.values(old)) expect(await exists(p), p).toBe(false);
    for (const p of Object.values(young)) expect(await exists(p), p).toBe(true);
    expect(await exists(paths.revision(first))).toBe(true);
    expect(await h.services.archive.current('ws')).toBe(head);
    expect((await readdir(paths.revision(head))).sort()).toEqual(['a.txt', 'b.txt']);
    expect((await gc(false)).count).toBe(0);
  });
});
