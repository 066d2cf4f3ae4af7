// The Procfile and docker-compose.yml name real fleet commands with valid arguments.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/main.js';
import { createCliContext } from '../../src/cli/context.js';
import { parseHostList, parseQueueList } from '../../src/cli/parse.js';
import { QUEUES } from '../../src/queues/index.js';
import { REMOTE_PROVIDER_HOSTS } from '../../src/providers/provider-hosts.js';
import { allQueueNames } from '../../src/status/queue-names.js';
import { ROOT } from '../helpers/processes.js';

const io = { stdout: () => undefined, stderr: () => undefined };
const commands = (await buildProgram(createCliContext(io, {}), () => undefined)).commands.map((c) => c.name());

// Checks one `fleet` argv: a known subcommand, and for `worker` a valid queue and host list.
// Returns the BullMQ queues it serves (`persist@<host>` for host-bound ones).
function checkFleetArgs(args: string[]): string[] {
  const [sub, ...rest] = args;
  expect(commands).toContain(sub);
  if (sub === 'worker') {
    const i = rest.indexOf('--queues');
    expect(i).toBeGreaterThanOrEqual(0);
    const h = rest.indexOf('--host');
    const hosts = parseHostList('--host', h >= 0 ? rest[h + 1] : undefined, 'local');
    return parseQueueList('--queues', rest[i + 1]).flatMap((q) => (QUEUES[q].hostBound ? hosts.map((host) => `${q}@${host}`) : [q]));
  }
  return [];
}

// Every queue a fleet with the local and the Vercel provider needs served.
const NEEDED = allQueueNames(['local', ...REMOTE_PROVIDER_HOSTS]).sort();

describe('Procfile', () => {
  const lines = readFileSync(path.join(ROOT, 'Procfile'), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));

  it('has one process type per queue, each running a real fleet command', () => {
    const served: string[] = [];
    for (const line of lines) {
      const [type, command] = line.split(/:\s+/, 2) as [string, string];
      const argv = command.split(/\s+/);
      expect(argv.slice(0, 2)).toEqual(['node', 'bin/fleet.js']);
      const queues = checkFleetArgs(argv.slice(2));
      if (queues.length > 0) {
        // The type names its queue, with the host for a remote provider's (persist-vercel).
        expect(queues.map((q) => q.replace('@local', '').replace('@', '-'))).toEqual([type]);
        served.push(...queues);
      }
    }
    expect(served.sort()).toEqual(NEEDED);
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, { image?: string; command: string[]; environment?: Record<string, string> }>;
  };

  it('runs Redis 7 with AOF and noeviction', () => {
    const redis = compose.services.redis!;
    expect(redis.image).toMatch(/^redis:7/);
    expect(redis.command.join(' ')).toContain('--appendonly yes');
    expect(redis.command.join(' ')).toContain('--maxmemory-policy noeviction');
    expect(redis.command.join(' ')).toContain('--requirepass ${REDIS_PASSWORD:?');
  });

  it('runs every queue with a real fleet command and a valid environment', async () => {
    const { loadConfig } = await import('../../src/config.js');
    const served: string[] = [];
    for (const [name, service] of Object.entries(compose.services)) {
      if (name === 'redis') continue;
      served.push(...checkFleetArgs(service.command));
      expect(service.environment?.REDIS_URL).toBe('redis://:${REDIS_PASSWORD}@redis:6379');
      expect(() => loadConfig(service.environment ?? {})).not.toThrow();
    }
    expect(served.sort()).toEqual(NEEDED);
  });
});
