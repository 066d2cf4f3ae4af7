// The healthchecks of docker-compose.yml, run exactly as written: in a network namespace of their
// own (so 127.0.0.1:6379 and :7400 are free, as inside the containers), a password-protected
// redis-server and a real `fleet web` (FLEET_HTTP_HOST=0.0.0.0, no API tokens, as the compose web
// service) come up; each check turns healthy once its service serves, and fails once it is gone.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/fleet-env.js';
import { FLEET_BIN, ROOT } from '../helpers/processes.js';

interface Service {
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  environment?: Record<string, string>;
}

const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };

// A compose `test` as the command the container runs: CMD-SHELL through sh, `$$` is a literal `$`.
function command(test: string[]): string[] {
  const [kind, ...rest] = test;
  const argv = rest.map((arg) => arg.replaceAll('$$', '$'));
  if (kind === 'CMD-SHELL') return ['sh', '-c', argv.join(' ')];
  expect(kind).toBe('CMD');
  return argv;
}

// Quotes one argument for the script below.
const q = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

describe('docker-compose.yml healthchecks', () => {
  it('every fleet service waits for a healthy Redis; the web service is checked through /readyz', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      if (name === 'redis') continue;
      expect(service.depends_on, name).toEqual({ redis: { condition: 'service_healthy' } });
    }
    expect(compose.services.redis!.healthcheck).toBeDefined();
    expect(compose.services.web!.healthcheck!.test.join(' ')).toContain('http://127.0.0.1:7400/readyz');
  });

  it('run as written, each turns healthy when its service serves and unhealthy when it is gone', { timeout: 120_000 }, async () => {
    const dir = await tempDir('compose-health');
    const redisCheck = command(compose.services.redis!.healthcheck!.test).map(q).join(' ');
    const webCheck = command(compose.services.web!.healthcheck!.test).map(q).join(' ');
    const web = compose.services.web!.environment!;
    const password = 'compose-health-password-0123456789';
    // Polls a check the way compose does (every 100 ms here), printing the state it reached.
    const script = `
set -u
ip link set lo up
poll() { for i in $(seq 1 300); do if "$@" >/dev/null 2>&1; then return 0; fi; sleep 0.1; done; return 1; }
redis_check() { ${redisCheck}; }
web_check() { ${webCheck}; }
redis_check && echo "redis healthy before start" || echo "redis unhealthy before start"
redis-server --port 6379 --requirepass "$REDIS_PASSWORD" --save '' --appendonly no --dir ${q(dir)} --daemonize yes --logfile ${q(path.join(dir, 'redis.log'))}
poll redis_check && echo "redis healthy"
web_check && echo "web healthy before start" || echo "web unhealthy before start"
env REDIS_URL="redis://:$REDIS_PASSWORD@127.0.0.1:6379" FLEET_HTTP_HOST=${q(web.FLEET_HTTP_HOST!)} FLEET_PREFIX=${q(web.FLEET_PREFIX!)} FLEET_HOME=${q(path.join(dir, 'home'))} FLEET_LOG_LEVEL=warn ${q(process.execPath)} ${q(FLEET_BIN)} web > ${q(path.join(dir, 'web.log'))} 2>&1 &
WEB=$!
poll web_check && echo "web healthy"
kill -TERM $WEB; wait $WEB
web_check && echo "web healthy after stop" || echo "web unhealthy after stop"
redis-cli -a "$REDIS_PASSWORD" --no-auth-warning shutdown nosave >/dev/null 2>&1
poll sh -c '! redis-cli -a "$REDIS_PASSWORD" --no-auth-warning ping' >/dev/null
redis_check && echo "redis healthy after stop" || echo "redis unhealthy after stop"
`;
    const root = process.getuid?.() === 0;
    const result = spawnSync('unshare', [...(root ? [] : ['-r']), '-n', 'bash', '-c', script], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', REDIS_PASSWORD: password },
      encoding: 'utf8',
      timeout: 110_000,
    });
    const log = (name: string) => {
      try {
        return readFileSync(path.join(dir, name), 'utf8').slice(-2_000);
      } catch {
        return '';
      }
    };
    expect(result.stdout.trim().split('\n'), `${result.stderr}\nweb.log: ${log('web.log')}\nredis.log: ${log('redis.log')}`).toEqual([
      'redis unhealthy before start',
      'redis healthy',
      'web unhealthy before start',
      'web healthy',
      'web unhealthy after stop',
      'redis unhealthy after stop',
    ]);
  });
});
