// Error classification of the Vercel provider, driven through the real SDK by the stand-in's
// fault hooks: hang → busy (deadline), 404 → gone, refused → gone, 401/403/400 → permanent,
// 5xx → busy after the SDK's retries, broken stream → busy, 410 snapshot_not_found → gone.
import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../../src/providers/provider-errors.js';
import type { VercelProvider } from '../../src/providers/vercel/vercel-provider.js';
import { standinProvider } from '../helpers/vercel-standin/standin-provider.js';
import { VercelStandin } from '../helpers/vercel-standin/vercel-standin.js';

let standin: VercelStandin;
let provider: VercelProvider;
let handle: string;
const signal = () => AbortSignal.timeout(30_000);

beforeEach(async () => {
  standin = await VercelStandin.start();
  provider = standinProvider(standin);
  ({ handle } = await provider.create({ workspaceId: 'ws-err', generation: 1, source: { type: 'empty' }, signal: signal() }));
});

afterEach(async () => {
  await standin.close();
});

describe('VercelProvider error classification', () => {
  it('a hanging request becomes busy when the caller aborts its deadline', async () => {
    standin.faults.add('getSandbox', { kind: 'hang' });
    const controller = new AbortController();
    const hung = once(standin.events, 'hang');
    const pending = provider.get(handle, controller.signal);
    await hung;
    controller.abort();
    const error = await pending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect(error).toMatchObject({ operation: 'get', context: expect.objectContaining({ callerAborted: true }) });
  });

  it('a hanging request becomes busy when the operation timeout fires', async () => {
    const impatient = standinProvider(standin, { operationTimeoutMs: 200 });
    standin.faults.add('readFile', { kind: 'hang' });
    const error = await impatient.readFile(handle, 'x.txt', signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect(error).toMatchObject({ operation: 'readFile', context: expect.objectContaining({ timeoutMs: 200, callerAborted: false }) });
  });

  it('a command outliving its own timeout is killed in the sandbox and answers timedOut, as a local one does', async () => {
    const killed = once(standin.events, 'kill');
    const result = await provider.exec(handle, { cmd: ['sh', '-c', 'echo before; sleep 30'], timeoutMs: 300, signal: signal() });
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL', stdout: 'before\n' });
    await killed;
  });

  it('a caller that gives up on a command gets busy, and the command is killed in the sandbox', async () => {
    const killed = once(standin.events, 'kill');
    const started = once(standin.events, 'command');
    const caller = new AbortController();
    const outcome = provider.exec(handle, { cmd: ['sleep', '30'], timeoutMs: 30_000, signal: caller.signal }).catch((caught: unknown) => caught);
    await started;
    caller.abort();
    const error = await outcome;
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect(error).toMatchObject({ operation: 'exec', context: expect.objectContaining({ callerAborted: true }) });
    await killed;
  });

  it('a command stream cut by the sandbox stopping is busy', async () => {
    const started = once(standin.events, 'command');
    const outcome = provider.exec(handle, { cmd: ['sleep', '30'], timeoutMs: 30_000, signal: signal() }).catch((caught: unknown) => caught);
    await started;
    await provider.stop(handle, signal());
    const error = await outcome;
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect(error).toMatchObject({ context: expect.objectContaining({ streamCode: 'sandbox_stopped' }) });
  });

  it('an unknown sandbox (404) is gone', async () => {
    const error = await provider.exec('fleet-nobody-g1', { cmd: ['true'], timeoutMs: 5_000, signal: signal() }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderGoneError);
    expect(error).toMatchObject({ context: expect.objectContaining({ status: 404 }) });
    expect(await provider.get('fleet-nobody-g1', signal())).toBeNull();
  });

  it('a resume that has no snapshot left (410 snapshot_not_found) is gone', async () => {
    standin.faults.add('getSandbox', { kind: 'status', status: 410, code: 'snapshot_not_found', message: 'Cannot resume sandbox: no snapshot available.' });
    const error = await provider.resume(handle, signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderGoneError);
    expect(error).toMatchObject({ context: expect.objectContaining({ status: 410, apiCode: 'snapshot_not_found' }) });
  });

  it('a refused connection is gone', async () => {
    await standin.refuseConnections();
    const error = await provider.get(handle, signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderGoneError);
    expect(error).toMatchObject({ context: expect.objectContaining({ networkCode: 'ECONNREFUSED' }) });
    await standin.acceptConnections();
    expect((await provider.get(handle, signal()))?.state).toBe('running');
  });

  it('a dropped connection is busy', async () => {
    standin.faults.add('getSandbox', { kind: 'drop' }, 3);
    const error = await provider.get(handle, signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect(standin.faults.pending('getSandbox')).toBe(0);
  });

  it('401 and 400 are permanent and not retried by the SDK', async () => {
    standin.faults.add('getSandbox', { kind: 'status', status: 401, code: 'unauthorized' });
    await expect(provider.get(handle, signal())).rejects.toBeInstanceOf(ProviderPermanentError);
    standin.faults.add('runCommand', { kind: 'status', status: 400, code: 'bad_request' });
    const before = standin.requests.length;
    await expect(provider.exec(handle, { cmd: ['true'], timeoutMs: 5_000, signal: signal() })).rejects.toMatchObject({
      classification: 'permanent',
      context: expect.objectContaining({ status: 400, apiCode: 'bad_request' }),
    });
    expect(standin.requests.slice(before).filter((request) => request.route === 'runCommand')).toHaveLength(1);
  });

  it('a wrong token is refused by the stand-in (403) and permanent', async () => {
    const intruder = standinProvider(standin, {}, { FLEET_VERCEL_TOKEN: 'not-the-token' });
    await expect(intruder.get(handle, signal())).rejects.toMatchObject({ classification: 'permanent', context: expect.objectContaining({ status: 403, apiCode: 'forbidden' }) });
    const otherTeam = standinProvider(standin, {}, { FLEET_VERCEL_TEAM_ID: 'team_other' });
    await expect(otherTeam.list(signal())).rejects.toBeInstanceOf(ProviderPermanentError);
  });

  it('5xx after the SDK retries is busy', async () => {
    standin.faults.add('getSandbox', { kind: 'status', status: 503, code: 'service_unavailable' }, 3);
    const error = await provider.get(handle, signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect(error).toMatchObject({ context: expect.objectContaining({ status: 503 }) });
    expect(standin.faults.pending('getSandbox')).toBe(0);
  });

  it('a 5xx the SDK retries through is no error at all', async () => {
    standin.faults.add('getSandbox', { kind: 'status', status: 502 }, 1);
    expect((await provider.get(handle, signal()))?.handle).toBe(handle);
  });
});
