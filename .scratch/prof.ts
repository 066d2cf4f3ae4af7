import { withBenchEnv } from '../bench/lib/bench-env.js';
import { startFleetHarness } from '../bench/lib/fleet-harness.js';
import { planTree, writeTree, changeFiles } from '../bench/lib/workspace-tree.js';
import { rng } from '../test/helpers/rng.js';
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';
await withBenchEnv('prof', async (env) => {
  const fleet = await startFleetHarness(env, { FLEET_ARCHIVE_FORMAT: '2', FLEET_PERSIST_CHANGE_SCAN: process.env.SCAN ?? 'true' });
  await fleet.provision('ws');
  const tree = planTree({ files: Number(process.env.FILES ?? 10_000), totalBytes: Number(process.env.FILES ?? 10_000) * 4_096 });
  const content = rng(7);
  await writeTree(fleet.live('ws'), tree, content);
  await fleet.persist('ws');
  await new Promise((r) => setTimeout(r, 1200));
  await changeFiles(fleet.live('ws'), tree, 0.01, 0, content);
  await fleet.persist('ws');
  const session = new Session(); session.connect();
  await session.post('Profiler.enable'); await session.post('Profiler.start');
  for (let t = 1; t <= 4; t++) {
    await changeFiles(fleet.live('ws'), tree, 0.01, t, content);
    const s = performance.now();
    const r = await fleet.persist('ws');
    console.log('turn', t, Math.round(performance.now() - s), 'ms', 'reused', r.reusedDirectories, 'changed', r.changedFiles);
  }
  const { profile } = await session.post('Profiler.stop');
  await writeFile('/tmp/persist.cpuprofile', JSON.stringify(profile));
});
