import { APIError, StreamError } from '@vercel/sandbox';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError, type ProviderErrorClass } from '../../src/providers/provider-errors.js';
import { DiskFullError } from '../../src/errors/disk-full-error.js';
import { UnsafeListingError } from '../../src/errors/unsafe-listing-error.js';
import { classifyOperationError, classifyVercelError } from '../../src/providers/vercel/classify-vercel-error.js';
import { UnsafeTarEntryError } from '../../src/providers/vercel/unsafe-tar-entry-error.js';

// An APIError as the SDK builds it from a non-2xx response.
function apiError(status: number, code?: string): APIError<unknown> {
  const json = code === undefined ? {} : { error: { code, message: 'whatever the server says' } };
  return new APIError(new Response(JSON.stringify(json), { status }), { message: `Status code ${status} is not ok`, json });
}

// undici's network failure: TypeError('fetch failed') with the socket error as cause.
function fetchFailed(code: string): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code}`), { code }) });
}

const cases: [string, unknown, ProviderErrorClass][] = [
  ['404', apiError(404, 'not_found'), 'gone'],
  ['410 snapshot_not_found', apiError(410, 'snapshot_not_found'), 'gone'],
  ['410 without body', apiError(410), 'gone'],
  ['400', apiError(400, 'bad_request'), 'permanent'],
  ['401', apiError(401, 'unauthorized'), 'permanent'],
  ['403', apiError(403, 'forbidden'), 'permanent'],
  ['409', apiError(409, 'conflict'), 'permanent'],
  ['422 validation', apiError(422, 'invalid_request'), 'permanent'],
  ['422 sandbox_stopping', apiError(422, 'sandbox_stopping'), 'busy'],
  ['422 sandbox_snapshotting', apiError(422, 'sandbox_snapshotting'), 'busy'],
  ['408', apiError(408), 'busy'],
  ['429', apiError(429, 'rate_limited'), 'busy'],
  ['500', apiError(500), 'busy'],
  ['503', apiError(503), 'busy'],
  ['200 with an invalid body', new APIError(new Response('{}', { status: 200 }), { message: 'Response JSON is not valid' }), 'permanent'],
  ['StreamError', new StreamError('sandbox_stopped', 'stopped', 'sbx_1'), 'busy'],
  ['AbortError', new DOMException('aborted', 'AbortError'), 'busy'],
  ['TimeoutError', new DOMException('timed out', 'TimeoutError'), 'busy'],
  ['fetch failed: ECONNREFUSED', fetchFailed('ECONNREFUSED'), 'gone'],
  ['fetch failed: AggregateError of refusals', new TypeError('fetch failed', { cause: Object.assign(new AggregateError([fetchFailed('ECONNREFUSED').cause, fetchFailed('ECONNREFUSED').cause]), { code: 'ECONNREFUSED' }) }), 'gone'],
  ['fetch failed: ECONNRESET', fetchFailed('ECONNRESET'), 'busy'],
  ['fetch failed: UND_ERR_SOCKET', fetchFailed('UND_ERR_SOCKET'), 'busy'],
  ['fetch failed: UND_ERR_CONNECT_TIMEOUT', fetchFailed('UND_ERR_CONNECT_TIMEOUT'), 'busy'],
  ['fetch failed: ENOTFOUND', fetchFailed('ENOTFOUND'), 'busy'],
  ['fetch failed without a cause', new TypeError('fetch failed'), 'permanent'],
  ['ZodError', (() => { try { z.string().parse(1); } catch (error) { return error; } })(), 'permanent'],
  ['UnsafeTarEntryError', new UnsafeTarEntryError('../x', 'climbs out with ..'), 'permanent'],
  ['UnsafeListingError', new UnsafeListingError('path climbs out with ..', Buffer.from('../x')), 'permanent'],
  ['a host filesystem error seen on the way', Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }), 'permanent'],
  ['a plain Error', new Error('No active session to stop.'), 'permanent'],
];

describe('classifyVercelError', () => {
  it.each(cases)('%s → %s', (_label, error, expected) => {
    const classified = classifyVercelError(error, 'op');
    expect(classified.classification).toBe(expected);
    expect(classified.operation).toBe('op');
    expect(classified.provider).toBe('vercel');
    expect(classified.cause).toBe(error);
  });

  it('keeps the status and the API error code on the context', () => {
    expect(classifyVercelError(apiError(410, 'snapshot_not_found'), 'resume').context).toMatchObject({ status: 410, apiCode: 'snapshot_not_found' });
  });

  it('does not look at message text', () => {
    const misleading = new APIError(new Response('{}', { status: 404 }), { message: 'timeout ECONNREFUSED 503' });
    expect(classifyVercelError(misleading, 'op')).toBeInstanceOf(ProviderGoneError);
    expect(classifyVercelError(new Error('ECONNREFUSED'), 'op')).toBeInstanceOf(ProviderPermanentError);
  });

  it('returns classified errors unchanged', () => {
    const busy = new ProviderBusyError('vercel', 'exec', 'slow');
    expect(classifyVercelError(busy, 'other')).toBe(busy);
  });

  it('lets a host storage error of the mirror through as it is (its own retry intent; never gone)', () => {
    const full = new DiskFullError({ operation: 'vercel mirror', path: '/m', errno: 'ENOSPC' }, 'no space left on the filesystem');
    expect(classifyOperationError(full, 'openTree')).toBe(full);
    expect(classifyOperationError(apiError(404), 'openTree')).toBeInstanceOf(ProviderGoneError);
  });
});
