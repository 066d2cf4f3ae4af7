/**
 * The lease of a backfill sweep: one Redis key per source holding a random token with a TTL,
 * renewed every third of the TTL while the sweep runs. A second sweep of the same source waits
 * up to twice the TTL (long enough for the lease of a killed sweep to expire) and then gives up
 * with `SweepLeaseError` (retried). Sweep state writes are fenced on the token in the same Lua
 * script, so a sweep that lost its lease can never move the cursor.
 */
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { SweepLeaseError } from '../errors/sweep-lease-error.js';
import type { FleetKeys } from '../keys.js';
import { luaScript } from '../lib/lua-script.js';
import type { Logger } from '../logger.js';
import { delay } from '../lib/with-timeout.js';

const RENEW = luaScript(
  'sweep-lease-renew',
  `-- Extends a lease if the caller still holds it.
-- KEYS[1] lease   ARGV: token, ttlMs
-- Returns 1 when extended, 0 when the lease is someone else's or gone.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
);

const RELEASE = luaScript(
  'sweep-lease-release',
  `-- Deletes a lease if the caller still holds it.
-- KEYS[1] lease   ARGV[1] token.  Returns 1 when released.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
);

const WRITE = luaScript(
  'sweep-state-write',
  `-- Writes sweep state fields only while the caller holds the lease.
-- KEYS[1] lease  KEYS[2] sweep state hash
-- ARGV: token, fieldsToDelete count n, n field names, then field/value pairs to set
-- Returns 1 when written, 0 when the lease is lost (nothing written).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[2])
for i = 3, 2 + n do redis.call('HDEL', KEYS[2], ARGV[i]) end
local pairs = {}
for i = 3 + n, #ARGV do pairs[#pairs + 1] = ARGV[i] end
if #pairs > 0 then redis.call('HSET', KEYS[2], unpack(pairs)) end
return 1`,
);

/** Who holds a source's sweep lease and for how much longer (null when nobody does). */
export async function readSweepLease(redis: RedisClient, keys: FleetKeys, source: string): Promise<{ token: string; ttlMs: number } | null> {
  const key = keys.backfillSweepLease(source);
  const [token, ttlMs] = await Promise.all([redis.get(key), redis.pttl(key)]);
  return token ? { token, ttlMs } : null;
}

export interface SweepLeaseOptions {
  readonly ttlMs: number;
  /** How long to wait for a held lease. @default 2 × ttlMs */
  readonly waitMs?: number;
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

export class SweepLease {
  readonly #controller = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #released = false;

  private constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly stateKey: string,
    readonly token: string,
    private readonly options: SweepLeaseOptions,
  ) {}

  /** Aborts when the lease is lost. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Takes the lease of `source`, waiting for a holder's lease to end or expire. */
  static async acquire(redis: RedisClient, keys: FleetKeys, source: string, options: SweepLeaseOptions): Promise<SweepLease> {
    const key = keys.backfillSweepLease(source);
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + (options.waitMs ?? options.ttlMs * 2);
    for (;;) {
      if ((await redis.set(key, token, 'PX', options.ttlMs, 'NX')) === 'OK') break;
      if (Date.now() >= deadline) {
        const holder = await redis.get(key);
        throw new SweepLeaseError(`the ${source} backfill sweep is running elsewhere (lease ${holder ?? 'just released'}); try again later`, { context: { source } });
      }
      await delay(Math.max(20, Math.min(250, Math.floor(options.ttlMs / 4))), options.signal);
    }
    const lease = new SweepLease(redis, key, keys.backfillSweep(), token, options);
    lease.#scheduleRenewal(Date.now());
    return lease;
  }

  // Renews every third of the TTL; aborts the sweep when the lease is gone or cannot be renewed in time.
  #scheduleRenewal(lastRenewed: number): void {
    this.#timer = setTimeout(() => {
      RENEW.run(this.redis, [this.key], [this.token, this.options.ttlMs])
        .then((renewed) => {
          if (this.#released) return;
          if (renewed === 1) return this.#scheduleRenewal(Date.now());
          this.#lose('the sweep lease was taken over');
        })
        .catch((error: unknown) => {
          if (this.#released) return;
          this.options.logger.warn({ err: error }, 'sweep lease renewal failed');
          if (Date.now() - lastRenewed >= this.options.ttlMs) this.#lose('the sweep lease could not be renewed before it expired');
          else this.#scheduleRenewal(lastRenewed);
        });
    }, Math.max(10, Math.floor(this.options.ttlMs / 3)));
    this.#timer.unref();
  }

  #lose(message: string): void {
    this.#controller.abort(new SweepLeaseError(message, { context: { key: this.key } }));
  }

  /** Sets and deletes sweep state fields while the lease is held; throws when it is lost. */
  async write(set: Readonly<Record<string, string>>, remove: readonly string[] = []): Promise<void> {
    const written = await WRITE.run(this.redis, [this.key, this.stateKey], [this.token, remove.length, ...remove, ...Object.entries(set).flat()]);
    if (written !== 1) {
      this.#lose('the sweep lease was lost before its state could be saved');
      throw this.signal.reason;
    }
  }

  /** Ends the hold (only if still ours). Never throws. */
  async release(): Promise<void> {
    this.#released = true;
    clearTimeout(this.#timer);
    await RELEASE.run(this.redis, [this.key], [this.token]).catch(() => undefined);
  }
}
