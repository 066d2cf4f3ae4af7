// An exec on a sandbox of another host runs for its own timeout, not the provision deadline
// (Procfile processes: a worker on host-b, the CLI on host-a); the worker's boot log prints every
// effective timeout.
import { describe, expect, it } from 'vitest';
import { testEnv } from '../helpers/fleet-env.js';
import { runFleet, startFleet } from '../helpers/processes.js';

describe('exec across hosts', () => {
  it('19.10: a command on another host lives as long as its own timeout, past the provision deadline', { timeout: 120_000 }, async () => {
    const env = await testEnv({ FLEET_PROVISION_DEADLINE_MS: '1500', FLEET_LOG_LEVEL: 'info' });
    const hostB = startFleet(['worker', '--queues', 'provision,persist'], { ...env, FLEET_HOST_ID: 'host-b' });
    await hostB.waitForOutput('serving', 60_000);
    const hostA = (args: string[]) => runFleet(args, { ...env, FLEET_HOST_ID: 'host-a', FLEET_LOG_LEVEL: 'warn' });

    const provisioned = JSON.parse((await hostA(['provision', 'ws', '--wait', '--json'])).stdout) as { hostId: string };
    expect(provisioned.hostId).toBe('host-b');
    // Three seconds of work, twice the provision deadline, well inside its own 30 s timeout.
    const exec = await hostA(['exec', 'ws', '--timeout', '30000', '--json', '--', 'sh', '-c', 'sleep 3; echo done']);
    expect(exec.code, exec.stderr).toBe(0);
    expect(JSON.parse(exec.stdout)).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
    // Without --json the output of a remote command is printed when it ends.
    expect(await hostA(['exec', 'ws', '--', 'sh', '-c', 'echo out; echo err >&2; exit 4'])).toMatchObject({ code: 4, stdout: 'out\n', stderr: 'err\n' });
    // Its own timeout still ends it.
    const cut = await hostA(['exec', 'ws', '--timeout', '500', '--json', '--', 'sh', '-c', 'sleep 30']);
    expect(JSON.parse(cut.stdout)).toMatchObject({ timedOut: true });

    const boot = hostB
      .stderr()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; timeouts?: { jobDeadlinesMs: Record<string, unknown>; execDefaultMs: number } })
      .find((line) => line.msg === 'effective timeouts');
    expect(boot?.timeouts?.jobDeadlinesMs).toMatchObject({ provision: 1500, 'persist@host-b': 600000, 'hostops@host-b': expect.stringContaining('exec: its timeout + 30000') });
    expect(boot?.timeouts?.execDefaultMs).toBe(60000);
  });
});
