/**
 * The one place that turns an error into an HTTP answer `{ error: { code, message, retryable, field? } }`.
 * Statuses come from the error's `code` (never its message): a typed error raised here keeps its
 * code, a job failure decoded from a worker (`remoteJob` set) carries the worker's code and retry
 * intent. A Redis refusal (typed by `RedisUnavailableError.from` before it gets here) is 503 with
 * `Retry-After`.
 */
import { isFleetError } from '../errors/fleet-error.js';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { REDIS_RETRY_AFTER_S } from '../errors/redis-unavailable-error.js';

export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    /** Whether sending the same request again may succeed (the error's own retry intent). */
    readonly retryable?: boolean;
    readonly field?: string;
    /** The error's class (`StaleGenerationError`): the TypeScript client rebuilds it from this. */
    readonly name?: string;
  };
}

export interface ErrorAnswer {
  readonly status: number;
  readonly body: ErrorBody;
  /** Extra response headers (`Retry-After` for a retryable unavailability). */
  readonly headers: Readonly<Record<string, string>>;
}

/** Codes answered with `Retry-After` (seconds): the caller should simply try again later. */
export const RETRY_AFTER_S_BY_CODE: Readonly<Record<string, number>> = Object.freeze({
  RedisUnavailable: REDIS_RETRY_AFTER_S,
});

/** Status of each known code; see docs/operator-surfaces.md for the table. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<string, number>> = Object.freeze({
  PayloadInvalid: 400,
  InvalidJson: 400,
  Usage: 400,
  Unauthorized: 401,
  CrossOriginRefused: 403,
  Forbidden: 403,
  NotFound: 404,
  BoardDisabled: 404,
  WorkspaceNotFound: 404,
  CheckpointNotFound: 404,
  FileNotFound: 404,
  JobNotFound: 404,
  RevisionNotFound: 404,
  NotAFile: 409,
  NotImplemented: 501,
  WorkspaceBusy: 503,
  StaleGeneration: 409,
  WorkspaceConflict: 409,
  ShrinkGuard: 409,
  NotReady: 409,
  EmptySource: 409,
  LockUnavailable: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  QuotaExceeded: 507,
  ProviderUnavailable: 503,
  RedisUnavailable: 503,
  WaitTimeout: 504,
});

/** Status of a job that failed in a worker with a code the table does not know. */
export const JOB_FAILED_STATUS = 502;
/** Status of anything unexpected in the web process itself. */
export const INTERNAL_STATUS = 500;

export function errorResponse(error: unknown): ErrorAnswer {
  if (!isFleetError(error)) {
    return { status: INTERNAL_STATUS, body: { error: { code: 'Internal', message: 'internal error (see the web process log)' } }, headers: {} };
  }
  const known = HTTP_STATUS_BY_CODE[error.code];
  const status = known ?? (error.remoteJob ? JOB_FAILED_STATUS : INTERNAL_STATUS);
  const field = error instanceof PayloadInvalidError ? error.field : undefined;
  const retryAfter = RETRY_AFTER_S_BY_CODE[error.code];
  return {
    status,
    body: { error: { code: error.code, message: error.message, retryable: error.retryable, ...(field === undefined ? {} : { field }), name: error.name } },
    headers: retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) },
  };
}
