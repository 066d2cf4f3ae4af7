/**
 * The one place where errors coming out of `@vercel/sandbox` (and the network under it) become the
 * provider's classified errors. It branches on types, HTTP status codes and error codes, never on
 * message text.
 *
 * | what arrives                                                    | class     | why |
 * |-----------------------------------------------------------------|-----------|-----|
 * | a `ProviderError`                                               | unchanged | already classified |
 * | `AbortError` / `TimeoutError` (a deadline fired)                | busy      | the provider did not answer in time |
 * | `APIError` 408, 429, 5xx                                        | busy      | the SDK already retried 3 times; retry later with a longer deadline |
 * | `APIError` 422 `sandbox_stopping` / `sandbox_snapshotting`      | busy      | a transient state the SDK's auto-resume could not wait out |
 * | `APIError` 404                                                  | gone      | the sandbox / session / snapshot does not exist |
 * | `APIError` 410                                                  | gone      | stopped and not resumable (auto-resume already ran for session calls), e.g. `snapshot_not_found` |
 * | `APIError` 400, 401, 403, 409, 422 (other codes), other 4xx     | permanent | the request will never be accepted (input, auth, quota, name taken) |
 * | `APIError` with a 2xx/3xx status (bad JSON, wrong content type) | permanent | the server speaks a protocol this SDK does not understand |
 * | `StreamError` (error line or early end of an NDJSON stream)     | busy      | the session stopped or the connection broke mid-stream; the next call auto-resumes |
 * | network error, code `ECONNREFUSED` (also as `cause`)            | gone      | nothing listens there any more |
 * | network error, other transient codes (`ECONNRESET`, `UND_ERR_*`…)| busy      | the network or the provider is flaky |
 * | `UnsafeTarEntryError`, `UnsafeListingError`                     | permanent | the sandbox produced an archive or a listing we refuse to apply |
 * | `StorageError` (the host-side mirror's filesystem)              | unchanged | a host failure, not the provider's: its own retry intent (`classifyOperationError`) |
 * | anything else (`ZodError`, programming errors, missing credentials) | permanent | retrying cannot fix it |
 */
import { APIError, StreamError } from '@vercel/sandbox';
import { ProviderBusyError, ProviderError, ProviderGoneError, ProviderPermanentError } from '../provider-errors.js';
import { UnsafeListingError } from '../../errors/unsafe-listing-error.js';
import { StorageError } from '../../errors/storage-error.js';
import { UnsafeTarEntryError } from './unsafe-tar-entry-error.js';

const PROVIDER = 'vercel';

// Error codes of connection failures that say the provider is unreachable for now, not gone.
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
]);
const REFUSED_CODE = 'ECONNREFUSED';
const TRANSIENT_422_CODES = new Set(['sandbox_stopping', 'sandbox_snapshotting']);

/** Turns any error thrown while talking to Vercel during `operation` into a classified `ProviderError`. */
export function classifyVercelError(error: unknown, operation: string): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof APIError) return classifyApiError(error, operation);
  if (error instanceof StreamError) {
    return new ProviderBusyError(PROVIDER, operation, `command stream broke (${error.code})`, { cause: error, context: { streamCode: error.code } });
  }
  if (isAbort(error)) return new ProviderBusyError(PROVIDER, operation, 'aborted by its deadline', { cause: error });
  if (error instanceof UnsafeTarEntryError) return new ProviderPermanentError(PROVIDER, operation, 'refused an unsafe archive entry', { cause: error, context: error.context });
  if (error instanceof UnsafeListingError) return new ProviderPermanentError(PROVIDER, operation, 'refused an unsafe tree listing', { cause: error, context: error.context });
  const codes = networkCodes(error);
  if (codes.length > 0 && codes.every((code) => code === REFUSED_CODE)) {
    return new ProviderGoneError(PROVIDER, operation, 'connection refused', { cause: error, context: { networkCode: REFUSED_CODE } });
  }
  const transient = codes.find((code) => TRANSIENT_NETWORK_CODES.has(code) || code === REFUSED_CODE);
  if (transient !== undefined) return new ProviderBusyError(PROVIDER, operation, `network error ${transient}`, { cause: error, context: { networkCode: transient } });
  return new ProviderPermanentError(PROVIDER, operation, 'unexpected error', { cause: error });
}

/** What a provider operation throws: a host storage error of the mirror as it is, anything else classified. */
export function classifyOperationError(error: unknown, operation: string): ProviderError | StorageError {
  return error instanceof StorageError ? error : classifyVercelError(error, operation);
}

// Status (and API error code) → class, see the table above.
function classifyApiError(error: APIError<unknown>, operation: string): ProviderError {
  const status = error.response.status;
  const apiCode = apiErrorCode(error);
  const options = { cause: error, context: { status, apiCode, sandboxName: error.sandboxName, sessionId: error.sessionId } };
  const what = `HTTP ${status}${apiCode ? ` ${apiCode}` : ''}`;
  if (status === 408 || status === 429 || (status >= 500 && status <= 599)) return new ProviderBusyError(PROVIDER, operation, what, options);
  if (status === 422 && apiCode !== undefined && TRANSIENT_422_CODES.has(apiCode)) return new ProviderBusyError(PROVIDER, operation, what, options);
  if (status === 404 || status === 410) return new ProviderGoneError(PROVIDER, operation, what, options);
  return new ProviderPermanentError(PROVIDER, operation, what, options);
}

/** The `error.code` of an API error body (`{"error":{"code":…}}`), when present. */
export function apiErrorCode(error: APIError<unknown>): string | undefined {
  const body = error.json as { error?: { code?: unknown } } | undefined;
  return typeof body?.error?.code === 'string' ? body.error.code : undefined;
}

/** True for an `APIError` with HTTP `status`. */
export function hasStatus(error: unknown, ...statuses: number[]): error is APIError<unknown> {
  return error instanceof APIError && statuses.includes(error.response.status);
}

// AbortSignal rejections: `AbortError` (abort()) and `TimeoutError` (AbortSignal.timeout()).
function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

// The system error codes of a network failure: the error itself, its cause, and the members of
// an AggregateError cause (undici reports `TypeError('fetch failed')` with the socket error as cause).
function networkCodes(error: unknown): string[] {
  const codes: string[] = [];
  const visit = (value: unknown, depth: number) => {
    if (depth > 3 || value === null || typeof value !== 'object') return;
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    if (value instanceof AggregateError) for (const inner of value.errors) visit(inner, depth + 1);
    visit((value as { cause?: unknown }).cause, depth + 1);
  };
  visit(error, 0);
  return codes;
}
