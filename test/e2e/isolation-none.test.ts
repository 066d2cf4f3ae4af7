// The development escape hatch: FLEET_LOCAL_ISOLATION=none keeps commands as the fleet's user
// with the host in view, says so at start-up, and `fleet status` shows it; a REDIS_URL without a
// password is then accepted (the password would protect nothing from an uncontained command).
import { describe, expect, it } from 'vitest';
import { tempDir, testRedisUrl } from '../helpers/fleet-env.js';
import { killGroup, runFleet, startFleet, cliJson } from '../helpers/processes.js';

describe('FLEET_LOCAL_ISOLATION=none', () => {
  it('warns at start, shows in fleet status, and runs commands as the fleet user in the live tree', { timeout: 120_000 }, async () => {
    const home = await tempDir('isolation-none');
    const env = { FLEET_HOME: home, FLEET_LOG_LEVEL: 'warn', FLEET_HEARTBEAT_INTERVAL_MS: '500', FLEET_SHUTDOWN_FLUSH_MS: '0', FLEET_HTTP_PORT: '0', FLEET_LOCAL_ISOLATION: 'none' };
    const up = startFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    expect(up.stderr()).toContain('FLEET_LOCAL_ISOLATION=none: sandbox commands run as the fleet user with the whole host in view');
    const status = await runFleet(['status'], env);
    expect(status.stdout).toContain('isolation: local=none (WARNING: sandboxes are not isolated)');
    const json = cliJson((await runFleet(['status', '--json'], env)).stdout) as { isolation: Record<string, string> };
    expect(json.isolation).toEqual({ local: 'none' });
    expect((await runFleet(['provision', 'dev', '--wait'], env)).code).toBe(0);
    const ran = cliJson((await runFleet(['exec', 'dev', '--json', '--', 'sh', '-c', 'id -u; pwd'], env)).stdout) as { stdout: string };
    expect(ran.stdout).toBe(`0\n${home}/live/dev/root\n`);
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });

  it('accepts a REDIS_URL without a password only with isolation none', async () => {
    const anonymous = new URL(testRedisUrl());
    anonymous.password = '';
    const home = await tempDir('isolation-none-url');
    const refused = await runFleet(['status'], { FLEET_HOME: home, REDIS_URL: anonymous.toString() });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^fleet: ConfigInvalid: REDIS_URL: expected a URL with a password/);
    // Accepted by the config; the shared test server itself still wants its password (NOAUTH).
    const accepted = await runFleet(['status'], { FLEET_HOME: home, REDIS_URL: anonymous.toString(), FLEET_LOCAL_ISOLATION: 'none' });
    expect(accepted.stderr).not.toContain('ConfigInvalid');
  });
});
