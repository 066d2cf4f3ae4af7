// FLEET_SANDBOX_NETWORK=host: the sandbox shares the host's network, so it reaches the fleet's
// loopback Redis and HTTP API; neither lets it in. Redis answers NOAUTH without the password
// (which the sandbox cannot read), and the HTTP API needs a token (start-up refuses host
// networking without FLEET_API_TOKENS).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { killGroup, runFleet, startFleet, cliJson } from '../helpers/processes.js';

const TOKEN = 'sandbox-host-net-token-0123456789';

describe('a sandbox on the host network', () => {
  it('reaches Redis and the API only to be refused; start-up refuses host networking without API tokens', { timeout: 120_000 }, async () => {
    const home = await tempDir('sandbox-hostnet');
    const base = { FLEET_HOME: home, FLEET_LOG_LEVEL: 'warn', FLEET_HEARTBEAT_INTERVAL_MS: '500', FLEET_SHUTDOWN_FLUSH_MS: '0', FLEET_HTTP_PORT: '0', FLEET_SANDBOX_NETWORK: 'host' };
    const refused = await runFleet(['up'], base);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^fleet: ConfigInvalid: FLEET_SANDBOX_NETWORK: expected none unless FLEET_API_TOKENS is set/);

    const env = { ...base, FLEET_API_TOKENS: TOKEN, FLEET_HTTP_HOST: '127.0.0.1' };
    const up = startFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const api = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    const { port } = new URL((JSON.parse(readFileSync(path.join(home, 'redis.json'), 'utf8')) as { url: string }).url);
    expect((await runFleet(['provision', 'agent', '--wait'], env)).code).toBe(0);
    const script = [
      `redis-cli -h 127.0.0.1 -p ${port} ping 2>&1`,
      `redis-cli -h 127.0.0.1 -p ${port} flushall 2>&1`,
      `redis-cli -h 127.0.0.1 -p ${port} config get requirepass 2>&1`,
      `cat ${home}/redis.json 2>/dev/null || echo no-password-file`,
      `python3 -c "import urllib.request as u
try:
    u.urlopen('${api}/v1/workspaces/agent')
except Exception as e:
    print('api', getattr(e, 'code', e))"`,
    ].join('; ');
    const run = await runFleet(['exec', 'agent', '--json', '--', 'sh', '-c', script], env);
    const result = cliJson(run.stdout) as { stdout: string };
    const lines = result.stdout.split('\n').filter((line) => line !== '');
    expect(lines.slice(0, 3).every((line) => line.startsWith('NOAUTH'))).toBe(true);
    expect(lines).toContain('no-password-file');
    expect(lines).toContain('api 401');
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });
});
