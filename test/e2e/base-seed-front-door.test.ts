// A baked base in the archive, through the front door (a running `fleet up` and the CLI), for each
// provider (Vercel through the real SDK against the loopback stand-in): the bake archives the
// base's files (local: its snapshot directory; Vercel: listed from the sandbox that tests the
// candidate) and records its root (`.bases/`); a workspace
// made from it persists its first revision against the base (every file referenced, none read as
// a change, the base's own root tree); a turn's persist after it counts only the workspace's own
// changes and stores its changed directory as a patch of the base's tree, and after the host dies with the live tree the workspace comes back
// exactly. The objects GC (grace 0) keeps the base's trees; `fleet verify` is clean.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchiveStore } from '../../src/archive/archive-store.js';
import { loadConfig } from '../../src/config.js';
import { tempDir } from '../helpers/fleet-env.js';
import { providerTestEnv, startLosableFleetUp } from '../helpers/fleet-up.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import { fleetJson, fleetShell, runFleet } from '../helpers/processes.js';

// 5 directories of 60 files, and one file at the top (and the bake's marker file).
const SETUP = 'for d in 1 2 3 4 5; do mkdir -p lib/d$d && for i in $(seq 1 60); do echo "base $d $i" > lib/d$d/f-$i.txt; done; done && echo top > top.txt';
const TURN = 'echo changed > lib/d2/f-7.txt && echo added > lib/d2/new.txt && rm lib/d4/f-1.txt';
const SHOW = 'cat lib/d2/f-7.txt lib/d2/new.txt lib/d3/f-3.txt top.txt; find lib -type f | wc -l; test -e lib/d4/f-1.txt && echo d4-f-1 || echo no-d4-f-1';
const AFTER = 'changed\nadded\nbase 3 3\ntop\n300\nno-d4-f-1\n';

describe.each(['local', 'vercel'] as const)('a baked base in the archive (%s, through fleet up and the CLI)', (provider) => {
  it("a workspace's first persist costs what it changed from its base; verify is clean; a restore is exact", { timeout: 240_000 }, async () => {
    const { env, standin } = await providerTestEnv(provider);
    const queue = `persist@${provider}`;
    const fleet = (args: string[]) => runFleet(args, env);
    const json = fleetJson(env);
    const sh = fleetShell(env, 'ws');
    const up = await startLosableFleetUp(env);

    const manifest = path.join(await tempDir('base-seed'), 'base.json');
    await writeFile(manifest, JSON.stringify({ schemaVersion: 1, name: 'seeded', runtime: 'node22', setup: [SETUP], smoke: ['test -f lib/d5/f-60.txt'] }));
    const baked = await json<{ snapshotId: string; activated: boolean }>(['bake', manifest, '--activate', '--wait']);
    expect(baked.activated).toBe(true);

    // The bake recorded the base's root tree in the archive.
    const archive = new ArchiveStore(loadConfig(env).paths.archiveRoot);
    const base = await archive.bases.read(baked.snapshotId);
    expect(base).toMatchObject({ snapshotId: baked.snapshotId, files: 302 });
    const record = JSON.parse(await readFile(path.join(archive.root, '.bases', `${baked.snapshotId}.json`), 'utf8')) as { root: string };
    expect(record.root).toBe(base!.root);

    expect(await json(['provision', 'ws', '--wait'])).toMatchObject({ outcome: 'created-from-base' });
    const created = await json<{ runtime: { handle: string } }>(['workspace', 'show', 'ws']);
    await sh(TURN);
    const persisted = await json<{ result: { revision: string; files: number; changedFiles: number; deletedFiles: number } }>(['persist', 'ws', '--delete', '--reason', 'turn-end', '--wait']);
    // Two of 300 files differ from the base, one is gone: nothing else was read as a change.
    expect(persisted.result).toMatchObject({ files: 302, changedFiles: 2 });

    // lib/d2 is stored as a patch of the base's lib/d2; an untouched directory is the base's own tree.
    const dirOf = async (root: string, ...names: string[]) => {
      let id = root;
      for (const name of names) id = ((await archive.objects.readTree(id)).find((n) => n.name.toString() === name) as { tree: string }).tree;
      return id;
    };
    const { root, parent } = (await archive.readRecord('ws', persisted.result.revision))!;
    // Before the turn, the workspace's first revision (the checkpoint after it became ready) is
    // exactly the base: every file referenced from it (none read as a change), every tree the base's.
    const first = (await archive.readRecord('ws', parent!))!;
    expect(first).toMatchObject({ parent: null, files: 302, root: base!.root });
    const listed = await json<{ jobs: { jobId: string; state: string }[] }>(['jobs', 'list', '--queue', queue, '--state', 'completed']);
    const results = await Promise.all(listed.jobs.map((job) => json<{ result: { revision: string; changedFiles: number } }>(['jobs', 'show', queue, job.jobId])));
    expect(results.find((job) => job.result.revision === parent)?.result).toMatchObject({ changedFiles: 0 });
    const patched = await archive.objects.loadTree(await dirOf(root, 'lib', 'd2'));
    expect(patched.base).toBe(await dirOf(base!.root, 'lib', 'd2'));
    expect(patched.nodes).toHaveLength(61);
    expect(await dirOf(root, 'lib', 'd3')).toBe(await dirOf(base!.root, 'lib', 'd3'));

    const verify = await fleet(['verify', 'ws']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    // The sandbox is lost, and the workspace comes back from its revision exactly.
    await up.lose(['ws'], standin ? () => standinProvider(standin).destroy(created.runtime.handle, AbortSignal.timeout(30_000)) : null);
    expect(await json<{ source: string }>(['provision', 'ws', '--wait'])).toMatchObject({ source: persisted.result.revision });
    expect(await sh(SHOW)).toBe(AFTER);
  });
});
