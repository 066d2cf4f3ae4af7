// An operator at the CLI of a running `fleet up`, for each provider: a persist shows its progress
// (phases, rate, ETA) while it runs; `fleet jobs list` finds the job that failed with its typed
// reason, `fleet jobs show` gives the whole job with its log steps, `fleet jobs retry --since`
// replays it (a dry run first changes nothing); `fleet workspace list` lists the workspace.
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { testEnv } from '../helpers/fleet-env.js';
import { killGroup, runFleet, startFleet, cliJson, fleetJson } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { providerEnv } from '../helpers/vercel-standin/standin-env.js';

interface Listed {
  jobs: { queue: string; jobId: string; name: string; state: string; workspaceId: string | null; attemptsMade: number; failure: { code: string; retryable: boolean } | null }[];
}

describe.each(['local', 'vercel'] as const)('fleet jobs and fleet workspace list (%s)', (provider) => {
  it('lists, shows and retries jobs; persist --wait shows progress; lists workspaces', { timeout: 180_000 }, async () => {
    const extra = await providerEnv(provider);
    const env = await testEnv({ ...extra, FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const fleet = (args: string[]) => runFleet(args, env);
    const json = fleetJson(env);
    const up = startFleet(['up'], env);
    addCleanup(() => killGroup(up.child, 'SIGKILL'));
    await up.waitForOutput('workers', 60_000);

    await json(['provision', 'demo', '--wait']);
    expect((await fleet(['exec', 'demo', '--', 'sh', '-c', 'mkdir -p src && for i in $(seq 1 2000); do echo "file $i" > src/f$i.txt; done'])).code).toBe(0);
    // Off a terminal the bar prints a line per tenth: the phases of the persist, then the result.
    const persisted = await fleet(['persist', 'demo', '--delete', '--reason', 'turn-end', '--wait']);
    expect(persisted.code, persisted.stderr).toBe(0);
    expect(persisted.stdout).toMatch(/^demo: revision \S+ \(2000 files/);
    expect(persisted.stderr).toMatch(/^persist demo \[[#.]{24}\] +\d+%/m);
    expect(persisted.stderr).toMatch(/persist demo \[#{24}\] 100% .*done/);

    // A persist of a generation the workspace never had fails in the worker, typed and final.
    const stale = await fleet(['enqueue', 'persist', '--data', JSON.stringify({ workspaceId: 'demo', generation: 7, reason: 'turn-end' }), '--wait']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/StaleGeneration/);

    const failed = await json<Listed>(['jobs', 'list', '--state', 'failed', '--since', '1h']);
    expect(failed.jobs).toHaveLength(1);
    const job = failed.jobs[0]!;
    expect(job).toMatchObject({ queue: expect.stringMatching(/^persist@/), state: 'failed', workspaceId: 'demo', attemptsMade: 1, failure: { code: 'StaleGeneration', retryable: false } });
    const human = await fleet(['jobs', 'list', '--state', 'failed']);
    expect(human.stdout).toMatch(new RegExp(`${job.queue}\\s+${job.jobId}\\s+failed\\s+demo\\s+1\\s+\\d+s ago.*StaleGeneration: `));
    // Nothing failed in the future.
    expect((await json<Listed>(['jobs', 'list', '--state', 'failed', '--since', new Date(Date.now() + 60_000).toISOString()])).jobs).toEqual([]);

    // The completed persist, in full, with the phases it went through as its log.
    const completed = await json<Listed>(['jobs', 'list', '--queue', 'persist', '--state', 'completed']);
    const done = completed.jobs.find((j) => j.name === 'persist' && j.workspaceId === 'demo')!;
    const shown = await json<{ state: string; data: { workspaceId: string }; result: { files: number }; logs: string[] }>(['jobs', 'show', done.queue, done.jobId]);
    expect(shown).toMatchObject({ state: 'completed', data: { workspaceId: 'demo' }, result: { files: 2000 } });
    expect(shown.logs.map((line) => line.split(' ')[1])).toEqual(expect.arrayContaining(['gate', 'commit', 'done']));
    const shownFailed = await fleet(['jobs', 'show', job.queue, job.jobId]);
    expect(shownFailed.stdout).toMatch(/failure\s+StaleGeneration: .*demo/);

    // A dry run lists and changes nothing; the retry replays the job (which fails again, attempt 2).
    const dry = await json<{ dryRun: boolean; retried: number; jobs: { jobId: string }[] }>(['jobs', 'retry', '--state', 'failed', '--since', '1h', '--dry-run']);
    expect(dry).toMatchObject({ dryRun: true, retried: 0, jobs: [{ jobId: job.jobId }] });
    expect((await json<Listed>(['jobs', 'list', '--state', 'failed'])).jobs[0]!.attemptsMade).toBe(1);
    const retried = await json<{ retried: number }>(['jobs', 'retry', '--state', 'failed', '--since', '1h']);
    expect(retried.retried).toBe(1);
    const again = await waitFor('the retried job to fail again', async () => {
      const list = await json<Listed>(['jobs', 'list', '--state', 'failed']);
      return list.jobs[0]?.attemptsMade === 2 ? list.jobs[0] : undefined;
    }, 60_000, 250);
    expect(again).toMatchObject({ jobId: job.jobId, failure: { code: 'StaleGeneration' } });

    const listed = await json<{ workspaces: { workspaceId: string; generation: number; address: { provider: string; hostId: string } | null }[]; nextCursor: string | null }>(['workspace', 'list']);
    expect(listed).toEqual({ workspaces: [expect.objectContaining({ workspaceId: 'demo', generation: 1, address: expect.objectContaining({ provider }) })], nextCursor: null });
    expect((await fleet(['workspace', 'list'])).stdout).toMatch(/^workspace\s+generation\s+handle\s+host\s+provider\s+last activity\ndemo\s+1\s+/);

    // Bad input names the flag and the value.
    const bad = await fleet(['jobs', 'list', '--since', 'yesterday']);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('--since: expected a duration like 90s, 30m, 1h, 2d or an ISO 8601 time, got "yesterday"') });
    expect((await fleet(['jobs', 'list', '--state', 'broken'])).stderr).toContain('--state: expected failed, completed, active, waiting, prioritized, delayed or all (comma-separated), got "broken"');
    expect((await fleet(['jobs', 'retry', '--state', 'completed'])).code).toBe(2);
    expect((await fleet(['workspace', 'list', '--limit', '0'])).stderr).toContain('--limit: expected a whole number from 1 to 1000, got "0"');

    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });
});
