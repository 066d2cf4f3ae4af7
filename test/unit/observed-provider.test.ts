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
});
