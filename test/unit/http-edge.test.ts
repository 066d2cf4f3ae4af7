// The HTTP edge's pure parts: the error → status table, constant-time comparison, same-origin.
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { DeadlineExceededError } from '../../src/errors/deadline-exceeded-error.js';
import { decodeFailure, encodeFailure } from '../../src/errors/failure-codec.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { ReplyError } from 'ioredis';
import { REDIS_RETRY_AFTER_S, RedisUnavailableError } from '../../src/errors/redis-unavailable-error.js';
import { RemoteJobError } from '../../src/errors/remote-job-error.js';
import { StaleGenerationError } from '../../src/errors/stale-generation-error.js';
import { WaitTimeoutError } from '../../src/errors/wait-timeout-error.js';
import { WorkspaceNotFoundError } from '../../src/errors/workspace-not-found-error.js';
import { assertSameOrigin } from '../../src/http/admin-guard.js';
import { constantTimeEquals } from '../../src/http/constant-time-equals.js';
import { errorResponse } from '../../src/http/error-response.js';
import { resolveWait } from '../../src/http/wait-query.js';

describe('errorResponse', () => {
  it('maps codes to statuses; remote failures keep the worker code; unknown errors are 500 without detail', () => {
    expect(errorResponse(new PayloadInvalidError('x', [{ field: 'kind', message: 'bad' }]))).toEqual({ status: 400, body: { error: { code: 'PayloadInvalid', message: 'x: kind: bad', retryable: false, field: 'kind', name: 'PayloadInvalidError' } }, headers: {} });
    expect(errorResponse(new WorkspaceNotFoundError('ws')).status).toBe(404);
    expect(errorResponse(new StaleGenerationError('ws', 1, 2)).status).toBe(409);
    expect(errorResponse(new RemoteJobError('persist@h', '1', 'StaleGeneration', 'stale')).status).toBe(409);
    expect(errorResponse(new RemoteJobError('bake', '1', 'DeadlineExceeded', 'late'))).toMatchObject({ status: 502, body: { error: { code: 'DeadlineExceeded' } } });
    expect(errorResponse(new WaitTimeoutError('gc', '1', 5)).status).toBe(504);
    // A job failure revived as its own class is still a worker's failure: 502 when the code has no status of its own.
    const late = decodeFailure('bake', '2', encodeFailure(new DeadlineExceededError('bake job 2', 1_000)));
    expect(late).toBeInstanceOf(DeadlineExceededError);
    expect(errorResponse(late)).toMatchObject({ status: 502, body: { error: { code: 'DeadlineExceeded', retryable: true } } });
    expect(errorResponse(decodeFailure('hostops@h', '3', encodeFailure(new PayloadInvalidError('hostops payload', [{ field: 'args.path', message: 'bad' }]))))).toMatchObject({
      status: 400,
      body: { error: { code: 'PayloadInvalid', retryable: false, field: 'args.path' } },
    });
    expect(errorResponse(new DeadlineExceededError('here', 1)).status).toBe(500);
    expect(errorResponse(new Error('secret detail'))).toEqual({ status: 500, body: { error: { code: 'Internal', message: 'internal error (see the web process log)' } }, headers: {} });
  });

  it('answers a Redis refusal (here or in a worker) with 503 and Retry-After', () => {
    const oom = new RedisUnavailableError('10.0.0.5:6379', 'OOM', new ReplyError("OOM command not allowed when used memory > 'maxmemory'."));
    expect(errorResponse(oom)).toEqual({
      status: 503,
      body: { error: { code: 'RedisUnavailable', message: "Redis at 10.0.0.5:6379 refused the command (OOM): OOM command not allowed when used memory > 'maxmemory'.", retryable: true, name: 'RedisUnavailableError' } },
      headers: { 'Retry-After': String(REDIS_RETRY_AFTER_S) },
    });
    expect(errorResponse(new RemoteJobError('gc', '3', 'RedisUnavailable', 'Redis at h:1 refused the command (READONLY): ...'))).toMatchObject({ status: 503, headers: { 'Retry-After': '5' } });
  });
});

describe('constantTimeEquals', () => {
  it('compares secrets of any length', () => {
    expect(constantTimeEquals('abc', 'abc')).toBe(true);
    expect(constantTimeEquals('abc', 'abcd')).toBe(false);
    expect(constantTimeEquals('', 'x')).toBe(false);
  });
});

describe('resolveWait', () => {
  it('cuts the wait to the cap and refuses bad values', () => {
    expect(resolveWait({}, 1000)).toEqual({ wait: false, timeoutMs: 1000 });
    expect(resolveWait({ wait: 'true', timeoutMs: '50' }, 1000)).toEqual({ wait: true, timeoutMs: 50 });
    expect(resolveWait({ wait: '1', timeoutMs: '999999' }, 1000)).toEqual({ wait: true, timeoutMs: 1000 });
    expect(() => resolveWait({ wait: 'yes' }, 1000)).toThrow(PayloadInvalidError);
    expect(() => resolveWait({ timeoutMs: '1.5' }, 1000)).toThrow(PayloadInvalidError);
  });
});

describe('assertSameOrigin', () => {
  const app = new Hono();
  app.all('*', (c) => {
    try {
      assertSameOrigin(c);
      return c.text('ok');
    } catch (error) {
      return c.text((error as { code: string }).code, 403);
    }
  });
  const call = async (method: string, headers: Record<string, string>) => (await app.request('http://board.local:7400/admin/queues/api/x', { method, headers: { host: 'board.local:7400', ...headers } })).status;

  it('lets reads through and requires a same-host Origin or Referer for writes', async () => {
    expect(await call('GET', {})).toBe(200);
    expect(await call('PUT', { origin: 'http://board.local:7400' })).toBe(200);
    expect(await call('PUT', { referer: 'http://board.local:7400/admin/queues/queue/gc' })).toBe(200);
    expect(await call('PUT', {})).toBe(403);
    expect(await call('POST', { origin: 'http://evil.example' })).toBe(403);
    expect(await call('POST', { origin: 'http://board.local:7401' })).toBe(403);
    expect(await call('DELETE', { origin: 'null' })).toBe(403);
    expect(await call('PATCH', { origin: 'http://board.local:7400', 'sec-fetch-site': 'cross-site' })).toBe(403);
    expect(await call('PUT', { origin: 'http://board.local:7400', 'sec-fetch-site': 'same-origin' })).toBe(200);
  });
});
