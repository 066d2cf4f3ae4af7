/**
 * Single-flight over @sesamecare-oss/redlock 1.4.0 (reference/reliability.md §2), wrapped to add
 * what the library lacks:
 * - validity is checked after acquire (non-positive or above the TTL is rejected and released);
 * - acquisition settles within a bound even against a hung Redis (client connections have a
 *   command timeout, and the whole acquire is raced against `acquireTimeoutMs`);
 * - the hold is bounded: after `maxHoldMs` the routine's signal aborts and extension stops, so
 *   the lock expires within one TTL even if the routine never returns;
 * - an extension failure aborts the routine's `AbortSignal`;
 * - release errors are logged, never thrown over the routine's own result.
 *
 * The lock is for efficiency (two workers rarely do the same work); correctness comes from the
 * generation fence at every write.
 */
import { Redlock, type Lock } from '@sesamecare-oss/redlock';
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import type { Logger } from '../logger.js';
import { LockLostError, LockUnavailableError } from './lock-errors.js';

export interface SingleFlightOptions {
  /** Lock TTL; extended while the routine runs. @default 10000 */
  readonly ttlMs?: number;
  /** Upper bound of one hold. @default 15 min */
  readonly maxHoldMs?: number;
  /** Upper bound of one acquisition (including retries). @default 5000 */
  readonly acquireTimeoutMs?: number;
  readonly retryCount?: number;
  readonly retryDelayMs?: number;
  readonly retryJitterMs?: number;
  /** Extend when less than this remains. @default ttl / 3 */
  readonly extendThresholdMs?: number;
}

/** Observations for metrics. */
export interface LockObserver {
  acquired?(resource: string, waitedMs: number): void;
  contended?(resource: string): void;
  failed?(resource: string, reason: 'unavailable' | 'lost' | 'release'): void;
}

export interface LockContext {
  /** Aborts when the lock is lost or the maximum hold is reached. */
  readonly signal: AbortSignal;
  /** Random token of this hold (recorded as provenance, e.g. provisionLockToken). */
  readonly token: string;
  /** Remaining validity in ms right after acquiring. */
  readonly validityMs: number;
  /**
   * Throws LockLostError unless the hold is still valid by this process's clock: called right
   * before an irreversible step (a generation bump, a publish), so a holder that was frozen past
   * its validity (SIGSTOP, a long GC pause) stops there instead of acting before its extension
   * timer gets to run and notice.
   */
  assertHeld(): void;
}

export class SingleFlight {
  readonly #redlock: Redlock;
  readonly #ttl: number;
  readonly #maxHold: number;
  readonly #acquireTimeout: number;
  readonly #threshold: number;

  constructor(
    redis: RedisClient,
    private readonly keys: FleetKeys,
    private readonly logger: Logger,
    options: SingleFlightOptions = {},
    private readonly observer: LockObserver = {},
  ) {
    this.#ttl = options.ttlMs ?? 10_000;
    this.#maxHold = options.maxHoldMs ?? 15 * 60_000;
    this.#acquireTimeout = options.acquireTimeoutMs ?? 5_000;
    this.#threshold = options.extendThresholdMs ?? Math.floor(this.#ttl / 3);
    this.#redlock = new Redlock([redis], {
      retryCount: options.retryCount ?? 20,
      retryDelay: options.retryDelayMs ?? 200,
      retryJitter: options.retryJitterMs ?? 100,
      // We extend ourselves (bounded); the library's auto-extension is only used by using().
      automaticExtensionThreshold: this.#threshold,
    });
    this.#redlock.on('error', () => undefined);
  }

  /** Acquires `resource`, runs `routine`, releases. Throws LockUnavailableError when it cannot acquire. */
  async using<T>(resource: string, routine: (ctx: LockContext) => Promise<T>): Promise<T>;
  async using<T>(resource: string, options: { maxHoldMs?: number }, routine: (ctx: LockContext) => Promise<T>): Promise<T>;
  async using<T>(resource: string, a: { maxHoldMs?: number } | ((ctx: LockContext) => Promise<T>), b?: (ctx: LockContext) => Promise<T>): Promise<T> {
    const routine = typeof a === 'function' ? a : b!;
    const maxHold = (typeof a === 'function' ? undefined : a.maxHoldMs) ?? this.#maxHold;
    const key = this.keys.lock(resource);
    const started = Date.now();
    const lock = await this.#acquire(resource, key);
    const validityMs = lock.expiration - Date.now();
    this.observer.acquired?.(resource, Date.now() - started);

    const controller = new AbortController();
    let current: Lock = lock;
    let stopped = false;
    let extension: NodeJS.Timeout | undefined;
    const holdTimer = setTimeout(() => {
      stopped = true;
      clearTimeout(extension);
      this.observer.failed?.(resource, 'lost');
      controller.abort(new LockLostError(`lock ${resource} held longer than ${maxHold} ms; abandoning it`, { context: { resource } }));
    }, maxHold);
    holdTimer.unref();
    const scheduleExtension = () => {
      const delay = Math.max(0, current.expiration - Date.now() - this.#threshold);
      extension = setTimeout(() => {
        if (stopped) return;
        current
          .extend(this.#ttl)
          .then((next) => {
            current = next;
            if (!stopped) scheduleExtension();
          })
          .catch((error: unknown) => {
            stopped = true;
            this.observer.failed?.(resource, 'lost');
            controller.abort(new LockLostError(`lock ${resource} could not be extended`, { context: { resource }, cause: error }));
          });
      }, delay);
      extension.unref();
    };
    scheduleExtension();

    try {
      const assertHeld = () => {
        controller.signal.throwIfAborted();
        if (Date.now() >= current.expiration) {
          stopped = true;
          this.observer.failed?.(resource, 'lost');
          const lost = new LockLostError(`lock ${resource} expired while its holder was not running`, { context: { resource } });
          controller.abort(lost);
          throw lost;
        }
      };
      return await routine({ signal: controller.signal, token: lock.value, validityMs, assertHeld });
    } finally {
      stopped = true;
      clearTimeout(extension);
      clearTimeout(holdTimer);
      await current.release().catch((error: unknown) => {
        this.observer.failed?.(resource, 'release');
        this.logger.debug({ err: error, resource }, 'lock release failed (it expires by itself)');
      });
    }
  }

  // Acquires with a bound on total time and checks the validity the library reports.
  async #acquire(resource: string, key: string): Promise<Lock> {
    let timer: NodeJS.Timeout | undefined;
    const attempt = this.#redlock.acquire([key], this.#ttl);
    attempt.catch(() => undefined);
    let lock: Lock;
    try {
      lock = await Promise.race([
        attempt,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new LockUnavailableError(`lock ${resource}: no answer within ${this.#acquireTimeout} ms`, { context: { resource } })), this.#acquireTimeout);
          timer.unref();
        }),
      ]);
    } catch (error) {
      if (error instanceof LockUnavailableError) {
        this.observer.failed?.(resource, 'unavailable');
        // A late grant must not linger: release it when it arrives.
        attempt.then((late) => late.release()).catch(() => undefined);
        throw error;
      }
      this.observer.contended?.(resource);
      throw new LockUnavailableError(`lock ${resource} is held by another worker`, { context: { resource }, cause: error });
    } finally {
      clearTimeout(timer);
    }
    const validity = lock.expiration - Date.now();
    if (validity <= 0 || validity > this.#ttl) {
      await lock.release().catch(() => undefined);
      this.observer.failed?.(resource, 'unavailable');
      throw new LockUnavailableError(`lock ${resource}: implausible validity ${validity} ms (ttl ${this.#ttl}); released`, { context: { resource, validity } });
    }
    return lock;
  }
}
