// An exec on a sandbox of another host runs for its own timeout, not the provision deadline
// (Procfile processes: a worker on host-b, the CLI on host-a); the worker's boot log prints every
// effective timeout.
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/keys.js';
import { loadConfig } from '../../src/config.js';
import { addCleanup } from '../helpers/cleanup.js';
import { readEvents } from '../helpers/event-stream.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';
import { runFleet, startFleet, cliJson } from '../helpers/processes.js';

describe('exec across hosts', () => {
  it('19.10: a command on another host lives as long as its own timeout, past the provision deadline', { timeout: 120_000 }, async () => {
    const env = await testEnv({ FLEET_PROVISION_DEADLINE_MS: '1500', FLEET_LOG_LEVEL: 'info' });
    const hostB = startFleet(['worker', '--queues', 'provision,persist'], { ...env, FLEET_HOST_ID: 'host-b' });
    await hostB.waitForOutput('serving', 60_000);
    const hostA = (args: string[]) => runFleet(args, { ...env, FLEET_HOST_ID: 'host-a', FLEET_LOG_LEVEL: 'warn' });

    const provisioned = cliJson((await hostA(['provision', 'ws', '--wait', '--json'])).stdout) as { hostId: string };
    expect(provisioned.hostId).toBe('host-b');
    // Three seconds of work, twice the provision deadline, well inside its own 30 s timeout.
    const exec = await hostA(['exec', 'ws', '--timeout', '30000', '--json', '--', 'sh', '-c', 'sleep 3; echo done']);
    expect(exec.code, exec.stderr).toBe(0);
    expect(cliJson(exec.stdout)).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
    // Without --json the output of a remote command is printed when it ends.
    expect(await hostA(['exec', 'ws', '--', 'sh', '-c', 'echo out; echo err >&2; exit 4'])).toMatchObject({ code: 4, stdout: 'out\n', stderr: 'err\n' });
    // Its own timeout still ends it.
    const cut = await hostA(['exec', 'ws', '--timeout', '500', '--json', '--', 'sh', '-c', 'sleep 30']);
    expect(cliJson(cut.stdout)).toMatchObject({ timedOut: true });

    const boot = hostB
      .stderr()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; timeouts?: { jobDeadlinesMs: Record<string, unknown>; execDefaultMs: number } })
      .find((line) => line.msg === 'effective timeouts');
    expect(boot?.timeouts?.jobDeadlinesMs).toMatchObject({ provision: 1500, 'persist@host-b': 600000, 'hostops@host-b': expect.stringContaining('exec: its timeout + 30000') });
    expect(boot?.timeouts?.execDefaultMs).toBe(60000);
  });

  it('exec over HTTP on another host streams its output while it runs, with a 10-minute deadline carried to the serving host, stdin forwarded', { timeout: 120_000 }, async () => {
    const env = await testEnv({ FLEET_PROVISION_DEADLINE_MS: '1500', FLEET_HTTP_PORT: '0' });
    const hostB = startFleet(['worker', '--queues', 'provision,persist'], { ...env, FLEET_HOST_ID: 'host-b' });
    await hostB.waitForOutput('serving', 60_000);
    // The web process of host-a has no sandboxes of its own: every exec goes through hostops@host-b.
    const web = startFleet(['web'], { ...env, FLEET_HOST_ID: 'host-a' });
    await web.waitForOutput(/^web http:\/\/127\.0\.0\.1:\d+$/m);
    const url = /^web (http:\/\/\S+)$/m.exec(web.stdout())![1]!;
    const post = (p: string, body: unknown, accept = 'application/json') => fetch(`${url}/v1/workspaces/ws${p}`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
    const provisioned = (await (await post('/provision?wait=true', {})).json()) as { result: { hostId: string } };
    expect(provisioned.result.hostId).toBe('host-b');

    const tenMinutes = 600_000;
    const stream = readEvents(await post('/exec', { cmd: ['sh', '-c', 'echo started; while [ ! -e go ]; do sleep 0.05; done; cat; echo bye >&2'], stdin: 'through two hosts\n', timeoutMs: tenMinutes }, 'application/x-ndjson'));
    // The first line arrives while the command still waits for its gate (a second exec makes it).
    expect(await stream.until((e) => e.type === 'stdout')).toEqual({ type: 'stdout', data: 'started\n' });
    const config = loadConfig(env);
    const hostops = new Queue('hostops@host-b', { connection: testConnection(config), prefix: fleetKeys(config.redis.prefix, config.redis.keyLayout).queuePrefix('hostops@host-b') });
    addCleanup(() => hostops.close());
    const active = await hostops.getJobs(['active']);
    // The serving host runs the command under its own 10-minute deadline (+ the kill slack), far past the provision deadline.
    expect(active.map((job) => job.data as { op: string; deadlineMs?: number; args: { timeoutMs: number; stream?: string } })).toEqual([
      expect.objectContaining({ op: 'exec', deadlineMs: tenMinutes + 30_000, args: expect.objectContaining({ timeoutMs: tenMinutes, stream: expect.any(String) }) }),
    ]);
    expect(await (await post('/exec', { cmd: ['touch', 'go'] })).json()).toMatchObject({ exitCode: 0 });
    const events = await stream.rest();
    expect(events.filter((e) => e.type === 'stdout').map((e) => e.data).join('')).toBe('started\nthrough two hosts\n');
    expect(events.filter((e) => e.type === 'stderr').map((e) => e.data).join('')).toBe('bye\n');
    expect(events.at(-1)).toMatchObject({ type: 'exit', exitCode: 0, timedOut: false });

    // Its own (short) timeout still ends it, and says so last.
    const cut = await (await post('/exec', { cmd: ['sh', '-c', 'echo before; sleep 30'], timeoutMs: 500 }, 'application/x-ndjson')).text();
    const lines = cut.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toEqual({ type: 'stdout', data: 'before\n' });
    expect(lines.at(-1)).toMatchObject({ type: 'exit', timedOut: true });
  });
});

