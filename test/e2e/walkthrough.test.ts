// The README walkthrough, as a user would type it: fleet up, provision, exec, persist, the
// sandbox dies (and fleet up is SIGKILLed), fleet up again, provision brings the files back.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { killGroup, runFleet, startFleet, cliJson } from '../helpers/processes.js';

describe('README walkthrough', () => {
  it('a workspace comes back with its files after its sandbox and the fleet die', { timeout: 120_000 }, async () => {
    const home = await tempDir('walkthrough');
    const env = { FLEET_HOME: home, FLEET_LOG_LEVEL: 'warn', FLEET_HEARTBEAT_INTERVAL_MS: '500', FLEET_SHUTDOWN_FLUSH_MS: '2000' };
    const fleet = (args: string[]) => runFleet(args, env);
    let up = startFleet(['up'], env);
    await up.waitForOutput('workers');

    const provisioned = cliJson((await fleet(['provision', 'demo', '--wait', '--json'])).stdout) as { outcome: string; generation: number };
    expect(provisioned).toMatchObject({ outcome: 'created-empty', generation: 1 });
    const exec = await fleet(['exec', 'demo', '--', 'sh', '-c', 'mkdir -p notes && echo "remember the milk" > notes/todo.txt && echo done']);
    expect(exec).toMatchObject({ code: 0, stdout: 'done\n' });
    const failing = await fleet(['exec', 'demo', '--', 'sh', '-c', 'exit 3']);
    expect(failing.code).toBe(3);
    const persisted = cliJson((await fleet(['persist', 'demo', '--delete', '--reason', 'turn-end', '--wait', '--json'])).stdout) as { result: { revision: string; files: number } };
    expect(persisted.result.files).toBe(1);

    // The sandbox dies with its host process: live tree gone, fleet up SIGKILLed.
    killGroup(up.child, 'SIGKILL');
    await up.exited;
    await rm(path.join(home, 'live', 'demo'), { recursive: true, force: true });
    up = startFleet(['up'], env);
    await up.waitForOutput('workers');

    const restored = cliJson((await fleet(['provision', 'demo', '--wait', '--json'])).stdout) as { outcome: string; source: string; generation: number };
    expect(restored).toMatchObject({ outcome: 'restored', source: persisted.result.revision, generation: 2 });
    expect((await fleet(['exec', 'demo', '--', 'cat', 'notes/todo.txt'])).stdout).toBe('remember the milk\n');
    const history = cliJson((await fleet(['history', 'demo', '--json'])).stdout) as { revisions: { revision: string; current: boolean }[] };
    expect(history.revisions.find((r) => r.current)?.revision).toBe(persisted.result.revision);
    expect((await fleet(['verify', 'demo'])).code).toBe(0);
    const status = cliJson((await fleet(['status', '--json'])).stdout) as { activeWorkspaces: number; fenceRejections: number };
    expect(status.activeWorkspaces).toBe(1);
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });
});
