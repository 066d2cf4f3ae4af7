// The Redlock wrapper: validity checked, bounded hold, extension failure aborts the routine,
// release errors never mask results, and a hung Redis cannot make acquire hang.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockLostError, LockUnavailableError } from '../../src/locks/lock-errors.js';
import { SingleFlight } from '../../src/locks/single-flight.js';
import { fleetKeys } from '../../src/keys.js';
import { createLogger } from '../../src/logger.js';
import { createRedis } from '../../src/redis.js';
import { addCleanup } from '../helpers/cleanup.js';
import { tempDir, testConfig, testConnection, uniquePrefix } from '../helpers/fleet-env.js';
import { RedisServer } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

const silent = createLogger({ level: 'silent' });

describe('SingleFlight', () => {
  it('assertHeld stops a holder whose lock expired while it was not running (the clock moved past its validity)', async () => {
    const { config } = await testConfig();
    const redis = testConnection(config);
    const lock = new SingleFlight(redis, fleetKeys(uniquePrefix()), silent, { ttlMs: 1_000, retryCount: 0, acquireTimeoutMs: 5_000 });
    const steps: string[] = [];
    const outcome = await lock
      .using('frozen', async ({ assertHeld, signal, validityMs }) => {
        assertHeld();
        steps.push('before the freeze');
        // What a SIGSTOP past the TTL looks like to the process: the clock jumped, no timer ran.
        const realNow = Date.now;
        const frozenUntil = realNow() + validityMs + 1;
        Date.now = () => Math.max(realNow(), frozenUntil);
        try {
          assertHeld();
          steps.push('after the freeze');
        } finally {
          Date.now = realNow;
        }
        return signal.aborted;
      })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(LockLostError);
    expect((outcome as Error).message).toContain('expired while its holder was not running');
    expect(steps).toEqual(['before the freeze']);
  });

  it('grants one holder at a time with 0 < validity <= Redis PTTL under 50 contenders', async () => {
    const { config } = await testConfig();
    const redis = testConnection(config);
    const keys = fleetKeys(uniquePrefix());
    const lock = new SingleFlight(redis, keys, silent, { ttlMs: 1_000, retryCount: 200, retryDelayMs: 20, retryJitterMs: 10, acquireTimeoutMs: 30_000 });
    let holders = 0;
    let maxHolders = 0;
    const grants: { validity: number; pttl: number }[] = [];
    await Promise.all(
      Array.from({ length: 50 }, () =>
        lock.using('res', async ({ validityMs }) => {
          const acquiredAt = Date.now();
          const pttl = await redis.pttl(keys.lock('res'));
          const elapsed = Date.now() - acquiredAt;
          holders += 1;
          maxHolders = Math.max(maxHolders, holders);
          grants.push({ validity: validityMs - elapsed, pttl });
          await new Promise((resolve) => setImmediate(resolve));
          holders -= 1;
        }),
      ),
    );
    expect(grants).toHaveLength(50);
    expect(maxHolders).toBe(1);
    for (const grant of grants) {
      expect(grant.validity).toBeGreaterThan(0);
      expect(grant.validity).toBeLessThanOrEqual(grant.pttl + 2);
    }
  });

  it('a routine that never returns loses the lock after its maximum hold', async () => {
    const { config } = await testConfig();
    const redis = testConnection(config);
    const keys = fleetKeys(uniquePrefix());
    const lock = new SingleFlight(redis, keys, silent, { ttlMs: 400, maxHoldMs: 1_000, retryCount: 0 });
    let release!: () => void;
    const hung = new Promise<void>((resolve) => {
      release = resolve;
    });
    let aborted: unknown;
    const holding = lock.using('res', async ({ signal }) => {
      signal.addEventListener('abort', () => {
        aborted = signal.reason;
      });
      await hung; // ignores the signal on purpose
      return 'late';
    });
    await waitFor('the hold limit to abort the routine', () => (aborted ? true : undefined));
    expect(aborted).toBeInstanceOf(LockLostError);
    await waitFor('the lock key to expire', async () => ((await redis.pttl(keys.lock('res'))) === -2 ? true : undefined));
    const other = new SingleFlight(redis, keys, silent, { ttlMs: 400, retryCount: 0 });
    expect(await other.using('res', async () => 'second holder')).toBe('second holder');
    release();
    expect(await holding).toBe('late');
  });

  it('aborts the routine when extension fails, and a release error never masks its result', async () => {
    const { config } = await testConfig();
    const redis = testConnection(config);
    const keys = fleetKeys(uniquePrefix());
    const lock = new SingleFlight(redis, keys, silent, { ttlMs: 600, retryCount: 0 });
    const result = await lock.using('res', async ({ signal }) => {
      await redis.del(keys.lock('res')); // someone else's failover wiped it
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      expect(signal.reason).toBeInstanceOf(LockLostError);
      return 42;
    });
    expect(result).toBe(42);
  });

  it('refuses a contended lock with LockUnavailable', async () => {
    const { config } = await testConfig();
    const redis = testConnection(config);
    const keys = fleetKeys(uniquePrefix());
    const a = new SingleFlight(redis, keys, silent, { ttlMs: 5_000, retryCount: 0 });
    const b = new SingleFlight(redis, keys, silent, { ttlMs: 5_000, retryCount: 2, retryDelayMs: 20 });
    await a.using('res', async () => {
      const error = await b.using('res', async () => 'never').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockUnavailableError);
    });
  });

  it('settles acquire against a hung (SIGSTOPped) Redis instead of hanging, and leaves no lock nobody can release', async () => {
    const server = await RedisServer.startOnFreePort(await tempDir('hung-redis'), false);
    addCleanup(async () => {
      server.child?.kill('SIGCONT');
      await server.stop('SIGKILL');
    });
    const redis = createRedis({ url: server.url, role: 'client', commandTimeoutMs: 200, name: 'hung-test' });
    addCleanup(() => redis.disconnect());
    await redis.ping();
    const keys = fleetKeys(uniquePrefix());
    const lock = new SingleFlight(redis, keys, silent, { ttlMs: 1_000, retryCount: 3, retryDelayMs: 50, acquireTimeoutMs: 2_000 });
    let ran = false;
    server.child!.kill('SIGSTOP');
    const error = await lock.using('res', async () => {
      ran = true;
      return 'acquired';
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockUnavailableError);
    expect(ran).toBe(false);
    server.child!.kill('SIGCONT');
    // Redis runs the SETs it buffered while stopped; whatever they left expires within one TTL
    // (nobody holds it), after which the lock is acquired normally.
    const observer = new Redis(server.url, { connectionName: 'hung-test-observer', maxRetriesPerRequest: 1 });
    addCleanup(() => observer.disconnect());
    await waitFor('the abandoned attempt to expire', async () => ((await observer.exists(keys.lock('res'))) === 0 ? true : undefined), 10_000);
    expect(await lock.using('res', async () => 'acquired after the hang')).toBe('acquired after the hang');
  });
});
