import { describe, expect, it } from 'vitest';
import { requestIdFrom, splitTrace, withTrace } from '../../src/observability/job-trace.js';

describe('job trace', () => {
  it('keeps a plain client request id and replaces anything else by a UUID', () => {
    expect(requestIdFrom('req-42.a:b_c')).toBe('req-42.a:b_c');
    for (const bad of [undefined, '', 'a b', 'x'.repeat(129), 'é', 'id\u0000']) expect(requestIdFrom(bad)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('attaches the id to job data and takes it off again, validated', () => {
    const data = withTrace({ workspaceId: 'ws-1', generation: 2 }, 'req-1');
    expect(data).toEqual({ workspaceId: 'ws-1', generation: 2, _trace: { requestId: 'req-1' } });
    expect(splitTrace(data)).toEqual({ payload: { workspaceId: 'ws-1', generation: 2 }, requestId: 'req-1' });
    expect(withTrace({ a: 1 }, undefined)).toEqual({ a: 1 });
    expect(withTrace({ a: 1 }, 'bad id')).toEqual({ a: 1 });
  });

  it('drops a forged or malformed trace from the payload without trusting it', () => {
    expect(splitTrace({ a: 1, _trace: { requestId: 'x\ny' } })).toEqual({ payload: { a: 1 }, requestId: null });
    expect(splitTrace({ a: 1, _trace: 'req' })).toEqual({ payload: { a: 1 }, requestId: null });
    expect(splitTrace({ a: 1, _trace: null })).toEqual({ payload: { a: 1 }, requestId: null });
    for (const odd of [null, 'text', 7, [1, 2]]) expect(splitTrace(odd)).toEqual({ payload: odd, requestId: null });
  });
});
