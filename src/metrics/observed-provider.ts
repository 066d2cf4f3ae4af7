/**
 * A `SandboxProvider` decorator that times every call and records its outcome from the error's
 * classification (ok / busy / gone / permanent; `error` for anything unclassified). Recording is
 * fire and forget, so it never changes what the call returns or throws.
 */
import { isProviderError } from '../providers/provider-errors.js';
import { inSpan } from '../observability/tracing.js';
import { OPTIONAL_PROVIDER_METHODS, PROVIDER_METHODS, type SandboxProvider } from '../providers/sandbox-provider.js';
import type { MetricsRecorder, ProviderOutcome } from './metrics-recorder.js';

/** Every method of the provider interface (each is timed where the provider has it). */
export const PROVIDER_OPERATIONS = [...PROVIDER_METHODS, ...OPTIONAL_PROVIDER_METHODS] as const;

// The outcome label of a failed call.
function outcomeOf(error: unknown): ProviderOutcome {
  return isProviderError(error) ? error.classification : 'error';
}

export function observedProvider(provider: SandboxProvider, metrics: MetricsRecorder): SandboxProvider {
  const wrapped: Record<string, unknown> = { name: provider.name, handleKind: provider.handleKind };
  for (const operation of PROVIDER_OPERATIONS) {
    const method = provider[operation] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (!method) continue;
    // One span per call (tracing.ts; a non-recording one while tracing is off).
    wrapped[operation] = (...args: unknown[]) =>
      inSpan(`provider ${operation}`, { 'fleet.provider': provider.name, 'fleet.operation': operation }, async () => {
        const started = performance.now();
        try {
          const result = await method.apply(provider, args);
          void metrics.providerCall(provider.name, operation, 'ok', performance.now() - started);
          return result;
        } catch (error) {
          void metrics.providerCall(provider.name, operation, outcomeOf(error), performance.now() - started);
          throw error;
        }
      });
  }
  return wrapped as unknown as SandboxProvider;
}
