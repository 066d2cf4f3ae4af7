/**
 * The one function that classifies a failed Redis command (`classifyRedisFailure`).
 *
 * A Redis error reply is `-<CODE> <text>`: by the Redis protocol (RESP "simple errors"), the first
 * word is an upper-case error code (`OOM`, `READONLY`, `MISCONF`, `NOSCRIPT`, `ERR`, ...) and
 * only the rest is free text. ioredis hands the reply over as a `ReplyError` whose message is the
 * reply, so the code is read from that leading token and nothing else; since Redis 7 a write
 * refused inside a Lua script keeps its code too (`OOM command not allowed ... script: ...`).
 * A transaction refused while it was queued (`EXECABORT`) is classified by the error that
 * refused it. Failures without a reply are classified by their class (ioredis's
 * `MaxRetriesPerRequestError`: no answer within the retries; redis-command-timeout.ts: none within
 * the command timeout) or by Node's system error code.
 */
import { ReplyError as IoRedisReplyError } from 'ioredis';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors/index.js';
import { RedisCommandTimeoutError } from './redis-command-timeout.js';

// ioredis types its re-export of redis-errors' ReplyError as `any`.
const ReplyError = IoRedisReplyError as new (message: string) => Error;

/** The leading word of an error reply, when it is a protocol error code. */
const CODE_TOKEN = /^([A-Z][A-Z0-9_]*)(?:\s|$)/;

/** Node system error codes of a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);

/** Code given to a command that got no answer within ioredis's retries or the command timeout (Redis down, paused or unreachable). */
export const NO_ANSWER = 'NOANSWER';

/**
 * Error codes meaning "Redis refuses (or cannot take) writes right now": retrying later may
 * succeed. `ERR`, `WRONGTYPE`, `NOSCRIPT` and the like are bugs or handled elsewhere, not refusals.
 */
export const REDIS_REFUSALS: ReadonlySet<string> = new Set([
  'OOM', // maxmemory reached under noeviction
  'READONLY', // a replica (e.g. during a failover)
  'MISCONF', // stop-writes-on-bgsave-error after a failed snapshot
  'BUSY', // a script is running past its time limit
  'LOADING', // the dataset is being loaded after a restart
  'MASTERDOWN', // a replica lost its primary (replica-serve-stale-data no)
  'NOREPLICAS', // min-replicas-to-write not met
  'CLUSTERDOWN',
  'TRYAGAIN',
  NO_ANSWER,
  ...CONNECTION_CODES,
]);

/** A classified Redis failure: its code and the error that carries it. */
export interface RedisFailure {
  /** The Redis error code (`OOM`, `READONLY`, `NOSCRIPT`, ...), `NOANSWER`, or a Node connection code. */
  readonly code: string;
  /** The error the code was read from (for EXECABORT: the reply that refused the transaction). */
  readonly error: Error;
}

/** Classifies a failure; `null` when `error` is not a Redis failure. */
export function classifyRedisFailure(error: unknown): RedisFailure | null {
  if (error instanceof ReplyError) {
    const code = CODE_TOKEN.exec(error.message)?.[1];
    if (code === undefined) return null;
    const previous = (error as { previousErrors?: unknown }).previousErrors;
    if (code === 'EXECABORT' && Array.isArray(previous)) {
      for (const cause of previous) {
        const inner = classifyRedisFailure(cause);
        if (inner) return inner;
      }
    }
    return { code, error };
  }
  if (error instanceof MaxRetriesPerRequestError) return { code: NO_ANSWER, error: error as unknown as Error };
  if (error instanceof RedisCommandTimeoutError) return { code: NO_ANSWER, error };
  const systemCode = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof systemCode === 'string' && CONNECTION_CODES.has(systemCode)) return { code: systemCode, error };
  return null;
}

/** The code of `classifyRedisFailure(error)`, or `null`. */
export function redisErrorCode(error: unknown): string | null {
  return classifyRedisFailure(error)?.code ?? null;
}

/** True for the codes of failures without a reply (Redis down, unreachable or silent). */
export function isConnectionFailure(code: string): boolean {
  return code === NO_ANSWER || CONNECTION_CODES.has(code);
}

/** The failure when Redis refused or could not be reached (a retry may succeed), else `null`. */
export function redisRefusal(error: unknown): RedisFailure | null {
  const failure = classifyRedisFailure(error);
  return failure !== null && REDIS_REFUSALS.has(failure.code) ? failure : null;
}
