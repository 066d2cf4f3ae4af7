// The provider decorator records each call's outcome from the error's classification.
import { describe, expect, it } from 'vitest';
import { PROVIDER_OPERATIONS, observedProvider } from '../../src/metrics/observed-provider.js';
import { noopMetrics, type MetricsRecorder, type ProviderOutcome } from '../../src/metrics/metrics-recorder.js';
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError } from '../../src/providers/provider-errors.js';
import type { SandboxProvider } from '../../src/providers/sandbox-provider.js';

describe('observedProvider', () => {
  it('passes results and errors through and records ok / busy / gone / permanent / error', async () => {
    const calls: [string, string, ProviderOutcome][] = [];
    const metrics: MetricsRecorder = { ...noopMetrics, providerCall: async (provider, operation, outcome) => void calls.push([provider, operation, outcome]) };
    const failures: Record<string, Error> = {
      stop: new ProviderBusyError('local', 'stop', 'slow'),
      destroy: new ProviderGoneError('local', 'destroy', 'gone'),
      snapshot: new ProviderPermanentError('local', 'snapshot', 'quota'),
      resume: new Error('boom'),
    };
    const fake = { name: 'local' } as Record<string, unknown>;
    for (const op of PROVIDER_OPERATIONS) {
      fake[op] = async function (this: unknown) {
        if (this !== fake) throw new Error('lost this');
        if (failures[op]) throw failures[op];
        return `${op}-result`;
      };
    }
    const provider = observedProvider(fake as unknown as SandboxProvider, metrics);
    expect(provider.name).toBe('local');
    expect(await provider.get('h', AbortSignal.timeout(1000))).toBe('get-result');
    for (const [op, error] of Object.entries(failures)) {
      await expect((provider as unknown as Record<string, () => Promise<unknown>>)[op]!()).rejects.toBe(error);
    }
    expect(calls).toEqual([
      ['local', 'get', 'ok'],
      ['local', 'stop', 'busy'],
      ['local', 'destroy', 'gone'],
      ['local', 'snapshot', 'permanent'],
      ['local', 'resume', 'error'],
    ]);
  });

  it('times the listings and fetches of a listed tree, and passes the rest through', async () => {
    const calls: [string, string, ProviderOutcome][] = [];
    const metrics: MetricsRecorder = { ...noopMetrics, providerCall: async (provider, operation, outcome) => void calls.push([provider, operation, outcome]) };
    const busy = new ProviderBusyError('vercel', 'openTree', 'slow');
    const listing = { listing: { entries: new Map(), skipped: { special: 0 }, truncated: false }, settled: () => true, oneInstant: true };
    let released = 0;
    const tree = {
      list: async () => listing,
      fetch: async () => {
        throw busy;
      },
      loadIndex: async () => null,
      saveIndex: async () => undefined,
      transfer: () => ({ listingBytes: 7, archiveBytes: 0, requestBytes: 0, files: 0, seededFiles: 0, full: true }),
      release: async () => void (released += 1),
    };
    const provider = observedProvider({ name: 'vercel', listTree: async () => tree } as unknown as SandboxProvider, metrics);
    const signal = AbortSignal.timeout(1000);
    const opened = await provider.listTree!('vercel:ws:g1', signal);
    expect(await opened.list(signal)).toBe(listing);
    await expect(opened.fetch([], async () => ({ id: 'x', bytes: 0, written: false }), signal)).rejects.toBe(busy);
    expect(opened.transfer().listingBytes).toBe(7);
    await opened.release();
    expect(released).toBe(1);
    expect(calls).toEqual([
      ['vercel', 'listTree', 'ok'],
      ['vercel', 'listTree.list', 'ok'],
      ['vercel', 'listTree.fetch', 'busy'],
    ]);
  });
});
