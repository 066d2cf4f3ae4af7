import { isConnectionFailure, redisRefusal } from '../lib/redis-error-code.js';
import { FleetError } from './fleet-error.js';

/**
 * Seconds a caller should wait before retrying after Redis refused: long enough for a failover,
 * a restart's dataset load or an operator freeing memory, short enough for an agent's turn.
 */
export const REDIS_RETRY_AFTER_S = 5;

/**
 * Thrown when Redis refused a command (`OOM`, `READONLY`, `MISCONF`, `LOADING`, ...) or could not
 * be reached, or gave no answer in time (`NOANSWER`). A refused command changed nothing; one
 * without an answer may have been applied once Redis woke, so a retry must be idempotent, as the
 * fleet's requests are (a persist request merges into the pending one). Retrying later may
 * succeed (HTTP 503 with `Retry-After`).
 */
export class RedisUnavailableError extends FleetError {
  readonly code = 'RedisUnavailable';
  readonly retryable = true;
  /** `host:port` of the Redis that refused (never credentials). */
  readonly address: string;
  /** The Redis error code (`OOM`, ...), `NOANSWER`, or a connection code (`ECONNREFUSED`, ...). */
  readonly refusal: string;
  // A getter, not a field: an error revived from a job failure has it too.
  get retryAfterS(): number {
    return REDIS_RETRY_AFTER_S;
  }

  constructor(address: string, refusal: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`Redis at ${address} ${isConnectionFailure(refusal) ? 'could not be reached' : 'refused the command'} (${refusal}): ${detail}`, { context: { address, refusal }, cause });
    this.address = address;
    this.refusal = refusal;
  }

  /** `error` as a RedisUnavailableError when it is a Redis refusal (already typed ones pass), else `null`. */
  static from(error: unknown, address: string): RedisUnavailableError | null {
    if (error instanceof RedisUnavailableError) return error;
    const refusal = redisRefusal(error);
    return refusal ? new RedisUnavailableError(address, refusal.code, refusal.error) : null;
  }
}
