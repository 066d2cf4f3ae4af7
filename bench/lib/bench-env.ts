/**
 * What every benchmark runs in: its own temporary directory and its own redis-server (no
 * persistence) on a free loopback port, released in reverse order however the benchmark ends.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../src/config.js';
import { Releasers } from '../../src/runtime/releasers.js';
import { RedisServer } from '../../test/helpers/redis-server.js';

export interface BenchEnv {
  /** Private temporary directory (removed at the end). */
  readonly dir: string;
  readonly redisUrl: string;
  /** LIFO cleanup of whatever the benchmark starts. */
  readonly releasers: Releasers;
  /** A fresh directory under `dir`. */
  subdir(name: string): Promise<string>;
  /** Environment of a fleet process using this Redis and a home under `dir`. */
  fleetEnv(overrides?: Record<string, string>): Record<string, string>;
  /** The parsed config of `fleetEnv(overrides)`. */
  config(overrides?: Record<string, string>): Config;
  /** Empties the Redis (between runs, so each starts from the same state). */
  flush(): Promise<void>;
  /** CPU time the private redis-server has used so far (user + sys), in ms. */
  redisCpuMs(): Promise<number>;
}

/** Runs `fn` with a private Redis and temp dir, then releases everything. */
export async function withBenchEnv<T>(label: string, fn: (env: BenchEnv) => Promise<T>): Promise<T> {
  const releasers = new Releasers();
  try {
    const dir = await mkdtemp(path.join(tmpdir(), `fleet-bench-${label}-`));
    releasers.add('temp dir', () => rm(dir, { recursive: true, force: true }));
    const server = await RedisServer.startOnFreePort(dir, false);
    releasers.add('redis-server', () => server.stop('SIGKILL'));
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1, connectionName: 'bench-admin' });
    releasers.add('admin connection', () => void admin.disconnect());
    const fleetEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      REDIS_URL: server.url,
      FLEET_PREFIX: '{bench}',
      FLEET_HOME: path.join(dir, 'home'),
      FLEET_LOG_LEVEL: 'warn',
      FLEET_SHUTDOWN_FLUSH_MS: '0',
      FLEET_GC_SCHEDULE: 'unattached=off,retention=off,litter=off,bases=off,orphans=off,idle=off,objects=off,verify=off',
      ...overrides,
    });
    const env: BenchEnv = {
      dir,
      redisUrl: server.url,
      releasers,
      async subdir(name) {
        const sub = path.join(dir, name);
        await mkdir(sub, { recursive: true });
        return sub;
      },
      fleetEnv,
      config: (overrides) => loadConfig(fleetEnv(overrides)),
      flush: async () => {
        await admin.flushall();
      },
      redisCpuMs: async () => {
        const info = await admin.info('cpu');
        const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
        return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
      },
    };
    return await fn(env);
  } finally {
    await releasers.releaseAll();
  }
}
