// Idle means quiescent, through the front door (a running `fleet up`, the CLI and the HTTP API):
// a long command or an open turn keeps a workspace from being reaped, however long ago it began.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { fleetKeys } from '../../src/keys.js';
import { testConnection, testEnv } from '../helpers/fleet-env.js';
import { killGroup, runFleet, startFleet, cliJson } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

describe('idle reap (fleet up, local provider)', () => {
  it('19.3: a long turn is never reaped mid-turn: a running exec or an open turn keeps the workspace awake', { timeout: 120_000 }, async () => {
    const env = await testEnv({ FLEET_IDLE_TTL_MS: '60000', FLEET_HTTP_PORT: '0', FLEET_GC_SCHEDULE: 'idle=off' });
    const config = loadConfig(env);
    const redis = testConnection(config);
    const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
    const fleet = (args: string[]) => runFleet(args, env);
    const up = startFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;

    const provisioned = cliJson((await fleet(['provision', 'ws', '--wait', '--json'])).stdout) as { handle: string };
    // The last activity looks an hour old, as after a long quiet stretch.
    const age = () => redis.zadd(keys.workspaces(keys.bucket('ws')), Date.now() - 3_600_000, 'ws');
    const reap = async () => cliJson((await fleet(['gc', '--kind', 'idle', '--json'])).stdout).results[0].count as number;
    const live = path.join(config.paths.liveRoot, 'ws', 'root');
    const sandboxState = async () => (cliJson((await fleet(['workspace', 'show', 'ws', '--json'])).stdout) as { runtime: { state: string } }).runtime.state;

    // 1. A command that runs "20 minutes": it waits for the test's go-ahead inside the sandbox.
    const exec = startFleet(['exec', 'ws', '--timeout', '120000', '--', 'sh', '-c', 'touch started; while [ ! -f release ]; do sleep 0.05; done; echo finished'], env);
    await waitFor('the command to start', () => existsSync(path.join(live, 'started')) || undefined);
    await age();
    expect(await reap()).toBe(0);
    expect(await sandboxState()).toBe('ready');

    // 2. The app opens a turn over HTTP; the command ends; the turn keeps the workspace awake.
    const opened = await fetch(`${web}/v1/workspaces/ws/turns`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'open', turnId: 't1' }) });
    expect(opened.status).toBe(200);
    expect(await opened.json()).toMatchObject({ workspaceId: 'ws', turnId: 't1', open: true });
    await writeFile(path.join(live, 'release'), '');
    expect((await exec.exited).code).toBe(0);
    expect(exec.stdout()).toBe('finished\n');
    await age();
    expect(await reap()).toBe(0);

    // 3. The turn closes (CLI): now the quiet workspace is flushed and stopped.
    const closed = await fleet(['turn', 'close', 'ws', 't1', '--json']);
    expect(cliJson(closed.stdout)).toMatchObject({ open: false, wasOpen: true });
    await age();
    expect(await reap()).toBe(1);
    await waitFor('the idle workspace to stop', async () => ((await sandboxState()) === 'stopped' ? true : undefined));
    expect(provisioned.handle).toBe(`local:${config.hostId}:ws:g1`);
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });
});
