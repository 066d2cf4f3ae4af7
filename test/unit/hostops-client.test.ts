// The hostops client (RemoteLocalProvider) over a plain-object transport: it sends the validated
// wire request, validates the reply by its result schema, turns the serving host's failure codes
// into provider error classes, and asks the host for `list` and `snapshotStatus` instead of
// answering for it.
import { describe, expect, it } from 'vitest';
import { DeadlineExceededError } from '../../src/errors/deadline-exceeded-error.js';
import { decodeFailure, encodeFailure } from '../../src/errors/failure-codec.js';
import { PayloadInvalidError } from '../../src/errors/payload-invalid-error.js';
import { RemoteJobError } from '../../src/errors/remote-job-error.js';
import { EXEC_JOB_SLACK_MS } from '../../src/hostops/host-op-args.js';
import type { HostOpPayload } from '../../src/hostops/host-op-payload.js';
import type { HostOpsTransport } from '../../src/hostops/hostops-transport.js';
import { RemoteLocalProvider } from '../../src/hostops/remote-local-provider.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../../src/providers/provider-errors.js';

const HANDLE = 'local:host-b:ws:g1';
const signal = () => AbortSignal.timeout(10_000);

interface Sent {
  readonly hostId: string;
  readonly request: HostOpPayload;
}

// A transport answering every request with `answer(request)`, recording what was sent.
function transport(answer: (request: HostOpPayload) => unknown): HostOpsTransport & { readonly sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    call: async (hostId, request) => {
      sent.push({ hostId, request });
      return answer(request);
    },
  };
}

// What `promise` rejected with (fails the test when it resolved).
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe('RemoteLocalProvider', () => {
  it('sends the wire request { op, handle, args } to its host and returns the decoded reply', async () => {
    const t = transport((request) => (request.op === 'readFile' ? Buffer.from('hello').toString('base64') : null));
    const remote = new RemoteLocalProvider(t, 'host-b');
    expect(await remote.readFile(HANDLE, 'notes.txt', signal())).toEqual(Buffer.from('hello'));
    await remote.stop(HANDLE, signal());
    await remote.writeFiles(HANDLE, [{ path: 'a.txt', content: Buffer.from('x'), mode: 0o600 }], signal());
    expect(t.sent).toEqual([
      { hostId: 'host-b', request: { op: 'readFile', handle: HANDLE, args: { path: 'notes.txt' } } },
      { hostId: 'host-b', request: { op: 'stop', handle: HANDLE, args: {} } },
      { hostId: 'host-b', request: { op: 'writeFiles', handle: HANDLE, args: { files: [{ path: 'a.txt', content: 'eA==', mode: 0o600 }] } } },
    ]);
  });

  it("an exec carries its own timeout plus slack as the job's deadline, without the callbacks", async () => {
    const result = { exitCode: 3, signal: null, stdout: 'o', stderr: 'e', timedOut: false, durationMs: 5 };
    const t = transport(() => result);
    const remote = new RemoteLocalProvider(t, 'host-b');
    const got = await remote.exec(HANDLE, { cmd: ['sh', '-c', 'exit 3'], timeoutMs: 45_000, signal: signal(), onStdout: () => undefined });
    expect(got).toEqual(result);
    expect(t.sent[0]?.request).toEqual({ op: 'exec', handle: HANDLE, args: { cmd: ['sh', '-c', 'exit 3'], timeoutMs: 45_000 }, deadlineMs: 45_000 + EXEC_JOB_SLACK_MS });
  });

  it('refuses a bad request before the transport is called, naming the field', async () => {
    const t = transport(() => null);
    const remote = new RemoteLocalProvider(t, 'host-b');
    const error = await rejection(remote.readFile(HANDLE, '../../etc/passwd', signal()));
    expect(error).toBeInstanceOf(PayloadInvalidError);
    expect((error as PayloadInvalidError).field).toBe('args.path');
    expect(t.sent).toEqual([]);
  });

  it('a reply its result schema refuses is a permanent provider error naming the field', async () => {
    const remote = new RemoteLocalProvider(
      transport(() => ({ handle: HANDLE, workspaceId: 'ws', generation: 1, hostId: 'host-b', state: 'paused' })),
      'host-b',
    );
    const error = await rejection(remote.get(HANDLE, signal()));
    expect(error).toBeInstanceOf(ProviderPermanentError);
    expect((error as ProviderPermanentError).message).toContain('host host-b answered with a result this host cannot use: hostops get result: state: ');
    expect((error as ProviderPermanentError).cause).toBeInstanceOf(PayloadInvalidError);
  });

  it("turns the serving host's failure codes into provider error classes", async () => {
    const failing = (code: string) =>
      new RemoteLocalProvider(
        transport(() => Promise.reject(new RemoteJobError('hostops@host-b', '7', code, `${code} there`))),
        'host-b',
      );
    expect(await rejection(failing('ProviderGone').resume(HANDLE, signal()))).toBeInstanceOf(ProviderGoneError);
    for (const code of ['ProviderBusy', 'DeadlineExceeded', 'Stalled']) expect(await rejection(failing(code).resume(HANDLE, signal()))).toBeInstanceOf(ProviderBusyError);
    const permanent = await rejection(failing('ProviderPermanent').resume(HANDLE, signal()));
    expect(permanent).toBeInstanceOf(ProviderPermanentError);
    expect((permanent as ProviderPermanentError).operation).toBe('resume');
    // Anything else keeps its code.
    const other = await rejection(failing('Unexpected').resume(HANDLE, signal()));
    expect(other).toBeInstanceOf(RemoteJobError);
    expect((other as RemoteJobError).code).toBe('Unexpected');
  });

  it('a failure the codec revives as its own class (the job ran out of its deadline there) is busy too', async () => {
    const revived = decodeFailure('hostops@host-b', '7', encodeFailure(new DeadlineExceededError('hostops job 7', 5_000)));
    expect(revived).toBeInstanceOf(DeadlineExceededError);
    const remote = new RemoteLocalProvider(transport(() => Promise.reject(revived)), 'host-b');
    const error = await rejection(remote.exec(HANDLE, { cmd: ['true'], timeoutMs: 1_000, signal: signal() }));
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect((error as ProviderBusyError).cause).toBe(revived);
  });

  it("the caller's own deadline running out while it waits is busy, as a host that did not answer", async () => {
    const own = new DeadlineExceededError('provision job 3', 1_000);
    const error = await rejection(new RemoteLocalProvider(transport(() => Promise.reject(own)), 'host-b').get(HANDLE, signal()));
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect((error as ProviderBusyError).cause).toBe(own);
  });

  it("the transport's own busy error passes unchanged", async () => {
    const busy = new ProviderBusyError('local', 'get', 'host host-b did not answer within 5000 ms');
    const error = await rejection(new RemoteLocalProvider(transport(() => Promise.reject(busy)), 'host-b').get(HANDLE, signal()));
    expect(error).toBe(busy);
  });

  it('list and snapshotStatus ask the serving host', async () => {
    const sandbox = { handle: HANDLE, workspaceId: 'ws', generation: 1, hostId: 'host-b', state: 'stopped' };
    const t = transport((request) => (request.op === 'list' ? [sandbox] : 'missing'));
    const remote = new RemoteLocalProvider(t, 'host-b');
    expect(await remote.list(signal())).toEqual([sandbox]);
    expect(await remote.snapshotStatus('base-1', signal())).toBe('missing');
    expect(t.sent.map((s) => s.request)).toEqual([
      { op: 'list', args: {} },
      { op: 'snapshotStatus', args: { snapshotId: 'base-1' } },
    ]);
  });

  it('a serving host older than snapshotStatus (it refuses the op) answers usable, as before; other failures stay failures', async () => {
    // What an older host's worker writes for an op its schema does not know, as this host decodes it.
    const older = decodeFailure('hostops@host-b', '8', encodeFailure(new PayloadInvalidError('hostops payload', [{ field: 'op', message: 'must be one of create, get', value: 'snapshotStatus' }])));
    expect(older).toBeInstanceOf(PayloadInvalidError);
    const refusing = new RemoteLocalProvider(transport(() => Promise.reject(older)), 'host-b');
    expect(await refusing.snapshotStatus('base-1', signal())).toBe('usable');
    // A reason in the plain form of older workers.
    const plain = new RemoteLocalProvider(transport(() => Promise.reject(decodeFailure('hostops@host-b', '8', 'PayloadInvalid: hostops payload: op: must be one of create, get'))), 'host-b');
    expect(await plain.snapshotStatus('base-1', signal())).toBe('usable');
    const gone = new RemoteLocalProvider(transport(() => Promise.reject(new RemoteJobError('hostops@host-b', '9', 'ProviderGone', 'x'))), 'host-b');
    expect(await rejection(gone.snapshotStatus('base-1', signal()))).toBeInstanceOf(ProviderGoneError);
  });

  it('an aborted call sends nothing', async () => {
    const t = transport(() => null);
    const controller = new AbortController();
    controller.abort(new Error('caller gave up'));
    expect(await rejection(new RemoteLocalProvider(t, 'host-b').stop(HANDLE, controller.signal))).toEqual(new Error('caller gave up'));
    expect(t.sent).toEqual([]);
  });
});
