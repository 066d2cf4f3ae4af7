/**
 * `/readyz`: the web process itself can serve traffic when Redis answers within a short timeout
 * and accepts writes (a PING answers even when Redis is out of memory, read-only or refusing
 * writes after a failed snapshot, so a write probe on a fleet-owned key with a TTL is what proves
 * writability) and the archive root is writable. Whether any worker process is alive is reported
 * too, but does not make this process unready: a load balancer that took every web replica out
 * because the workers are gone would also take away the API that shows it (`FleetNoWorkers`
 * alerts on that). Each check is time-boxed (an NFS archive can hang) and reported by name.
 */
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import type { RedisClient } from '../redis.js';
import type { Config } from '../config.js';
import type { FleetKeys } from '../keys.js';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { redisAddress } from '../redis.js';
import { countLiveWorkers } from '../state/worker-registry.js';
import { withTimeout } from '../lib/with-timeout.js';

export interface CheckResult {
  readonly ok: boolean;
  readonly detail: string;
}

export interface Readiness {
  readonly ready: boolean;
  readonly checks: { readonly redis: CheckResult; readonly redisWritable: CheckResult; readonly workers: CheckResult; readonly archive: CheckResult };
}

/** Time box of each check: readiness probes must answer fast. */
export const READINESS_CHECK_MS = 1_000;

/** Lifetime of the write probe's key: it outlives no probe interval worth keeping. */
export const WRITE_PROBE_TTL_MS = 60_000;

// Runs one check within the time box; an error or timeout is a failed check with its message.
async function check(name: string, run: () => Promise<CheckResult>): Promise<CheckResult> {
  try {
    return await withTimeout(run(), READINESS_CHECK_MS, () => new Error(`${name} check timed out after ${READINESS_CHECK_MS} ms`));
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  }
}

// Writes the probe key (SET is refused under OOM, READONLY, MISCONF like any fleet write).
async function probeWrite(redis: RedisClient, keys: FleetKeys): Promise<CheckResult> {
  const key = keys.readinessProbe();
  try {
    await redis.set(key, String(Date.now()), 'PX', WRITE_PROBE_TTL_MS);
    return { ok: true, detail: `write probe ${key} accepted` };
  } catch (error) {
    const refused = RedisUnavailableError.from(error, redisAddress(redis));
    if (!refused) throw error;
    return { ok: false, detail: `write probe refused: ${refused.message}` };
  }
}

export async function checkReadiness({ redis, keys, config }: { redis: RedisClient; keys: FleetKeys; config: Config }): Promise<Readiness> {
  const redisCheck = await check('redis', async () => ({ ok: (await redis.ping()) === 'PONG', detail: 'PING answered' }));
  const [redisWritable, workers, archive] = await Promise.all([
    redisCheck.ok ? check('redis write', () => probeWrite(redis, keys)) : Promise.resolve({ ok: false, detail: 'not checked: redis unreachable' }),
    redisCheck.ok
      ? check('workers', async () => {
          const live = await countLiveWorkers(redis, keys, config.worker.heartbeatIntervalMs);
          return { ok: live > 0, detail: `${live} live worker process(es)` };
        })
      : Promise.resolve({ ok: false, detail: 'not checked: redis unreachable' }),
    check('archive', async () => {
      await mkdir(config.paths.archiveRoot, { recursive: true, mode: 0o700 });
      await access(config.paths.archiveRoot, constants.W_OK);
      return { ok: true, detail: `${config.paths.archiveRoot} is writable` };
    }),
  ]);
  const checks = { redis: redisCheck, redisWritable, workers, archive };
  return { ready: redisCheck.ok && redisWritable.ok && archive.ok, checks };
}
