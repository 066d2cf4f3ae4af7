// A host that stops heartbeating is not waited for: a request nobody has picked up is withdrawn
// from its queue (it can never run late) and the call fails with ProviderGoneError, without
// waiting out the transport's cap. A host that stays alive is waited for as before.
import { describe, expect, it } from 'vitest';
import { BullmqHostOpsTransport } from '../../src/hostops/bullmq-hostops-transport.js';
import { RemoteLocalProvider } from '../../src/hostops/remote-local-provider.js';
import { ProviderBusyError, ProviderGoneError } from '../../src/providers/provider-errors.js';
import { createHarness } from '../helpers/workspace-harness.js';

const signal = () => AbortSignal.timeout(60_000);

describe('hostops to a host that died', () => {
  it('withdraws the waiting request and answers gone once the host is seen dead', async () => {
    const h = await createHarness();
    let checks = 0;
    // Alive for the first two looks, dead from the third: the request is already queued by then.
    const transport = new BullmqHostOpsTransport(h.services.client.pool, 5 * 60_000, { hostAlive: async () => ++checks < 3, pollMs: 50 });
    const remote = new RemoteLocalProvider(transport, 'host-gone');
    const error = await remote.get('local:host-gone:ws:g1', signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderGoneError);
    expect(error).toMatchObject({ operation: 'get', context: expect.objectContaining({ hostId: 'host-gone', state: 'withdrawn' }) });
    expect(checks).toBe(3);
    // Nothing is left for the host to run if it comes back.
    expect(await h.services.client.pool.queue('hostops@host-gone').getJobCountByTypes('waiting', 'active', 'delayed', 'prioritized')).toBe(0);
  });

  it('a live host that does not answer is still waited for until the cap, then busy', async () => {
    const h = await createHarness();
    let checks = 0;
    const transport = new BullmqHostOpsTransport(h.services.client.pool, 1_000, { hostAlive: async () => (++checks, true), pollMs: 50 });
    const error = await new RemoteLocalProvider(transport, 'host-slow').get('local:host-slow:ws:g1', signal()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderBusyError);
    expect(checks).toBeGreaterThan(0);
    expect(await h.services.client.pool.queue('hostops@host-slow').getJobCountByTypes('waiting')).toBe(1);
  });
});
