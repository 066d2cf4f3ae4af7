// The hostops request and result schemas (src/hostops/): one request member and one result
// schema per operation; bad arguments and bad replies are refused with a PayloadInvalid naming
// the field; the wire shape `{ op, handle?, args, deadlineMs? }` is what older callers send.
import { describe, expect, it } from 'vitest';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { EXEC_JOB_SLACK_MS, MAX_EXEC_TIMEOUT_MS } from '../../src/hostops/host-op-args.js';
import { HOST_OPS, HostOpPayload } from '../../src/hostops/host-op-payload.js';
import { HOST_OP_RESULTS, parseHostOpResult } from '../../src/hostops/host-op-results.js';
import { parsePayload } from '../../src/queues/payload.js';

const HANDLE = 'local:host-b:ws:g1';

// The PayloadInvalidError `parse` throws (fails the test when it does not throw one).
function refusal(parse: () => unknown): PayloadInvalidError {
  let caught: unknown;
  try {
    parse();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(PayloadInvalidError);
  return caught as PayloadInvalidError;
}

const BAD_REQUESTS: readonly { readonly data: unknown; readonly field: string }[] = [
  { data: { op: 'format', handle: HANDLE, args: {} }, field: 'op' },
  { data: { op: 'exec', handle: HANDLE, args: { cmd: 'touch pwned', timeoutMs: 1_000 } }, field: 'args.cmd' },
  { data: { op: 'exec', handle: HANDLE, args: { cmd: [], timeoutMs: 1_000 } }, field: 'args.cmd' },
  { data: { op: 'exec', handle: HANDLE, args: { cmd: ['true'], timeoutMs: 0 } }, field: 'args.timeoutMs' },
  { data: { op: 'exec', handle: HANDLE, args: { cmd: ['true'], cwd: '../..', timeoutMs: 1_000 } }, field: 'args.cwd' },
  { data: { op: 'exec', handle: HANDLE, args: { cmd: ['true'], env: { 'A=B': 'x' }, timeoutMs: 1_000 } }, field: 'args.env.A=B' },
  { data: { op: 'exec', handle: HANDLE, args: { cmd: ['true'], timeoutMs: 1_000 }, deadlineMs: 10 }, field: 'deadlineMs' },
  { data: { op: 'get', handle: '../x', args: {} }, field: 'handle' },
  { data: { op: 'get', args: {} }, field: 'handle' },
  { data: { op: 'create', args: { workspaceId: '../../x', generation: 1, source: { type: 'empty' } } }, field: 'args.workspaceId' },
  { data: { op: 'create', args: { workspaceId: 'ws', generation: 1, source: { type: 'host', path: '/' } } }, field: 'args.source.type' },
  { data: { op: 'create', handle: HANDLE, args: { workspaceId: 'ws', generation: 1, source: { type: 'empty' } } }, field: 'handle' },
  { data: { op: 'writeFiles', handle: HANDLE, args: { files: [{ path: 'a', content: 'not base64!' }] } }, field: 'args.files.0.content' },
  { data: { op: 'readFile', handle: HANDLE, args: { path: '/etc/passwd' } }, field: 'args.path' },
  { data: { op: 'markReady', handle: HANDLE, args: { marker: { generation: 0, source: 'empty', readyAt: 1 } } }, field: 'args.marker.generation' },
  { data: { op: 'snapshot', handle: HANDLE, args: { expirationMs: -1 } }, field: 'args.expirationMs' },
  { data: { op: 'snapshotStatus', args: { snapshotId: '..' } }, field: 'args.snapshotId' },
  { data: { op: 'deleteSnapshot', args: {} }, field: 'args.snapshotId' },
  { data: { op: 'list', args: { all: true } }, field: 'args.all' },
  { data: { op: 'stop', handle: HANDLE, args: {}, signal: 1 }, field: 'signal' },
];

describe('hostops request schema', () => {
  it('has one member and one result schema per operation', () => {
    expect(HostOpPayload.options.map((member) => member.shape.op.value).sort()).toEqual([...HOST_OPS].sort());
    expect(Object.keys(HOST_OP_RESULTS).sort()).toEqual([...HOST_OPS].sort());
  });

  for (const bad of BAD_REQUESTS) {
    it(`refuses ${JSON.stringify(bad.data).slice(0, 90)} naming ${bad.field}`, () => {
      const error = refusal(() => parsePayload('hostops payload', HostOpPayload, bad.data));
      expect(error.retryable).toBe(false);
      expect(error.issues.map((issue) => issue.field)).toContain(bad.field);
      expect(error.message).toContain(`${bad.field}: `);
    });
  }

  it('accepts the wire shape older callers enqueue, args of argument-less operations optional', () => {
    expect(parsePayload('p', HostOpPayload, { op: 'readReady', handle: HANDLE })).toEqual({ op: 'readReady', handle: HANDLE, args: {} });
    const exec = { op: 'exec', handle: HANDLE, args: { cmd: ['sh', '-c', 'true'], timeoutMs: 5_000 }, deadlineMs: 5_000 + EXEC_JOB_SLACK_MS };
    expect(parsePayload('p', HostOpPayload, exec)).toEqual(exec);
    const create = { op: 'create', args: { workspaceId: 'ws', generation: 2, source: { type: 'base-snapshot', snapshotId: 'base-1' }, env: { A: 'b' } } };
    expect(parsePayload('p', HostOpPayload, create)).toEqual(create);
    // The longest exec deadline a caller can send still passes.
    expect(parsePayload('p', HostOpPayload, { ...exec, deadlineMs: MAX_EXEC_TIMEOUT_MS + EXEC_JOB_SLACK_MS }).deadlineMs).toBe(MAX_EXEC_TIMEOUT_MS + EXEC_JOB_SLACK_MS);
  });
});

const SANDBOX = { handle: HANDLE, workspaceId: 'ws', generation: 1, hostId: 'host-b', state: 'running', createdAt: 1_700_000_000_000 };
const EXEC = { exitCode: 0, signal: null, stdout: 'out', stderr: '', timedOut: false, durationMs: 12 };

const BAD_REPLIES = [
  { op: 'create', reply: { handle: 'vercel-sandbox', hostId: 'host-b' }, field: 'handle' },
  { op: 'get', reply: { ...SANDBOX, state: 'paused' }, field: 'state' },
  { op: 'list', reply: [SANDBOX, { ...SANDBOX, generation: 0 }], field: '1.generation' },
  { op: 'list', reply: null, field: '' },
  { op: 'exec', reply: { ...EXEC, timedOut: 'no' }, field: 'timedOut' },
  { op: 'exec', reply: { ...EXEC, exitCode: 1.5 }, field: 'exitCode' },
  { op: 'readFile', reply: 'not base64!', field: '' },
  { op: 'readReady', reply: { generation: 1, source: '..', readyAt: 1 }, field: 'source' },
  { op: 'snapshot', reply: { snapshotId: '../x' }, field: 'snapshotId' },
  { op: 'snapshotStatus', reply: 'gone', field: '' },
  { op: 'destroy', reply: { destroyed: true }, field: '' },
] as const;

describe('hostops result schemas', () => {
  for (const bad of BAD_REPLIES) {
    it(`refuses a ${bad.op} reply ${JSON.stringify(bad.reply).slice(0, 60)} naming ${bad.field || '(payload)'}`, () => {
      const error = refusal(() => parseHostOpResult(bad.op, bad.reply));
      expect(error.subject).toBe(`hostops ${bad.op} result`);
      expect(error.issues.map((issue) => issue.field)).toContain(bad.field);
      expect(error.message).toContain(`${bad.field || '(payload)'}: `);
    });
  }

  it('decodes what the serving host sends', () => {
    expect(parseHostOpResult('readFile', Buffer.from('hi\0there').toString('base64'))).toEqual(Buffer.from('hi\0there'));
    expect(parseHostOpResult('readFile', null)).toBeNull();
    expect(parseHostOpResult('get', SANDBOX)).toEqual(SANDBOX);
    expect(parseHostOpResult('list', [SANDBOX])).toEqual([SANDBOX]);
    expect(parseHostOpResult('exec', EXEC)).toEqual(EXEC);
    expect(parseHostOpResult('snapshotStatus', 'missing')).toBe('missing');
    // An operation without a result: BullMQ hands back `null` (also for an older host's `undefined`).
    expect(parseHostOpResult('stop', null)).toBeUndefined();
    expect(parseHostOpResult('stop', undefined)).toBeUndefined();
  });

  it('drops a key it does not know, so a newer serving host does not break an older caller', () => {
    expect(parseHostOpResult('get', { ...SANDBOX, region: 'eu' })).toEqual(SANDBOX);
  });
});
