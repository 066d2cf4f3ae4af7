// `fleet backfill`: the sweep enqueued and followed with a progress bar, status, one workspace,
// and usage errors, through the real CLI process against an in-process backfill worker.
import { describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/workspace-harness.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { runFleet, cliJson } from '../helpers/processes.js';
import { writeLegacyWorkspace } from '../helpers/legacy-store.js';

describe('fleet backfill', () => {
  it('sweeps with progress, reports status, backfills one workspace, refuses bad flags', { timeout: 120_000 }, async () => {
    const h = await createHarness();
    for (let i = 0; i < 6; i++) await writeLegacyWorkspace(h.config.paths.legacyRoot, `c${i}`, [[`file-${i}.txt`, `content ${i}`], ['dir/shared.md', 'shared']]);
    await testWorkers(h.config, ['backfill']);

    const sweep = await runFleet(['backfill', 'sweep', '--batch', '2', '--rate', '1000', '--wait', '--json'], h.env);
    expect(sweep.code, sweep.stderr).toBe(0);
    expect(cliJson(sweep.stdout)).toMatchObject({ status: 'completed', total: 6, position: 6, migrated: 6, failed: 0 });
    // Not a terminal: the bar prints a line per step of progress.
    expect(sweep.stderr).toMatch(/sweep blob \[#+\.*\]\s+\d+% \d+\/6 migrated \d+, failed 0/);

    const status = await runFleet(['backfill', 'status', '--json'], h.env);
    expect(status.code, status.stderr).toBe(0);
    expect(cliJson(status.stdout)).toMatchObject({ source: 'blob', migrated: 6, cursor: null, lease: null, current: null, last: { migrated: 6, total: 6 } });

    await writeLegacyWorkspace(h.config.paths.legacyRoot, 'c-late', [['late.txt', 'late']]);
    const one = await runFleet(['backfill', 'c-late', '--wait'], h.env);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^c-late: migrated from blob \(revision r\S+, 1 files \/ 4 bytes copied, 0 already archived\)/);
    const again = await runFleet(['backfill', '--json', 'c-late', '--wait'], h.env);
    expect(cliJson(again.stdout)).toMatchObject({ workspaceId: 'c-late', status: 'already-migrated' });

    for (const args of [['backfill', 'sweep', '--source', 'tape'], ['backfill', 'sweep', '--batch', '0'], ['backfill', '../etc'], ['backfill']]) {
      const bad = await runFleet(args, h.env);
      expect(bad.code, `${args.join(' ')}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr).toMatch(/^fleet: /);
    }
  });
});
