// `npm start` on a clean checkout brings the fleet up with an embedded Redis; `fleet status`
// finds it from the same directory without configuration; SIGTERM stops everything.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { ROOT, runFleet, spawnTracked, cliJson } from '../helpers/processes.js';
import { QUEUE_NAMES } from '../../src/queues/index.js';
import { ping } from '../helpers/redis-server.js';

describe('npm start', () => {
  it('starts the embedded fleet; status --json lists the six queues; SIGTERM stops it cleanly', async () => {
    const home = await tempDir('fleet-up');
    const env = { FLEET_HOME: home, FLEET_LOG_LEVEL: 'warn', FLEET_HEARTBEAT_INTERVAL_MS: '500', FLEET_HTTP_PORT: '0', npm_config_update_notifier: 'false' };
    const up = spawnTracked('npm', ['start', '--silent'], { env, cwd: ROOT });
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    // The embedded server's password is generated and never printed.
    expect(up.stdout()).toMatch(/redis\s+redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ \(embedded/);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    expect((await fetch(`${web}/healthz`)).status).toBe(200);

    const state = path.join(home, 'redis.json');
    expect(existsSync(state)).toBe(true);
    const status = await runFleet(['status', '--json'], { FLEET_HOME: home, FLEET_HEARTBEAT_INTERVAL_MS: '500' });
    expect(status.code).toBe(0);
    const parsed = cliJson(status.stdout) as { queues: Record<string, Record<string, number>>; workers: number };
    expect(Object.keys(parsed.queues).sort()).toEqual([...QUEUE_NAMES].sort());
    for (const counts of Object.values(parsed.queues)) expect(Object.keys(counts).sort()).toEqual(['active', 'completed', 'delayed', 'failed', 'waiting']);
    expect(parsed.workers).toBe(1);

    const { url } = JSON.parse((await import('node:fs')).readFileSync(state, 'utf8')) as { url: string };
    const password = new URL(url).password;
    expect(password).toMatch(/^[0-9a-f]{64}$/);
    expect(up.stdout()).not.toContain(password);
    expect(statSync(state).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(home, 'redis', 'redis.conf')).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    // Without the password the server answers nothing but NOAUTH.
    const anonymous = new URL(url);
    anonymous.password = '';
    expect(await ping(anonymous.toString())).toBe(false);
    expect(await ping(url)).toBe(true);
    const pid = Number(/process\s+pid (\d+)/.exec(up.stdout())![1]);
    process.kill(pid, 'SIGTERM');
    const exit = await up.exited;
    expect(exit.code).toBe(0);
    expect(existsSync(state)).toBe(false);
    expect(await ping(url)).toBe(false);
  });

  it('other commands explain how to start Redis when none is running', async () => {
    const home = await tempDir('fleet-none');
    const result = await runFleet(['status'], { FLEET_HOME: home });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('fleet up');
  });

  it('usage errors exit 2 with one line on stderr', async () => {
    const home = await tempDir('fleet-usage');
    for (const args of [['bogus'], ['worker', '--queues', 'persist,nope'], ['enqueue', 'gc', '--data', '{bad json']]) {
      const result = await runFleet(args, { FLEET_HOME: home });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    const help = await runFleet(['status', '--help'], { FLEET_HOME: home });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--json');
  });

  it('a bad environment variable fails start-up with one line naming it', async () => {
    const home = await tempDir('fleet-badenv');
    const result = await runFleet(['up'], { FLEET_HOME: home, FLEET_CHECKPOINT_INTERVAL_MS: '30s' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('fleet: ConfigInvalid: FLEET_CHECKPOINT_INTERVAL_MS: expected a whole number of milliseconds between 1000 and 2592000000, got "30s"');
  });

  it('a secret variable\'s value is never printed: a short admin password fails start-up by its length', async () => {
    const home = await tempDir('fleet-secret');
    const result = await runFleet(['up'], { FLEET_HOME: home, FLEET_ADMIN_PASSWORD: 'swordfish' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('fleet: ConfigInvalid: FLEET_ADMIN_PASSWORD: expected a password of at least 12 characters (unset disables the board), got "(redacted, 9 characters)"');
    expect(result.stdout + result.stderr).not.toContain('swordfish');
  });

  it('an unknown FLEET_ variable is warned about with the name it most likely meant', async () => {
    const home = await tempDir('fleet-typo');
    const result = await runFleet(['status'], { FLEET_HOME: home, FLEET_PERSIT_CHANGE_SCAN: 'false', FLEET_TOTALLY_MADE_UP: '1' });
    const lines = result.stderr.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      'warning: FLEET_PERSIT_CHANGE_SCAN is not a variable the fleet reads and is ignored (did you mean FLEET_PERSIST_CHANGE_SCAN?); `fleet env` lists them',
      'warning: FLEET_TOTALLY_MADE_UP is not a variable the fleet reads and is ignored; `fleet env` lists them',
    ]);
    // The command itself goes on as it would (here: no Redis is running).
    expect(result.code).toBe(1);
    expect(lines[2]).toContain('fleet up');
  });
});
