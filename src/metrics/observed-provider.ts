/**
 * A `SandboxProvider` decorator that times every call and records its outcome from the error's
 * classification (ok / busy / gone / permanent; `error` for anything unclassified). Recording is
 * fire and forget, so it never changes what the call returns or throws. The calls a persist makes
 * on a listed tree are timed too, as `listTree.list` and `listTree.fetch` (`listTree` itself only
 * opens the tree).
 */
import { isProviderError } from '../providers/provider-errors.js';
import { inSpan } from '../observability/tracing.js';
import { OPTIONAL_PROVIDER_METHODS, PROVIDER_METHODS, type ListedTree, type SandboxProvider } from '../providers/sandbox-provider.js';
import type { MetricsRecorder, ProviderOutcome } from './metrics-recorder.js';

/** Every method of the provider interface (each is timed where the provider has it). */
export const PROVIDER_OPERATIONS = [...PROVIDER_METHODS, ...OPTIONAL_PROVIDER_METHODS] as const;
/** The timed calls of a listed tree (the `operation` label of each). */
export const LISTED_TREE_OPERATIONS = ['listTree.list', 'listTree.fetch'] as const;

// The outcome label of a failed call.
function outcomeOf(error: unknown): ProviderOutcome {
  return isProviderError(error) ? error.classification : 'error';
}

export function observedProvider(provider: SandboxProvider, metrics: MetricsRecorder): SandboxProvider {
  // One span per call (tracing.ts; a non-recording one while tracing is off), timed and counted.
  const observed = <T>(operation: string, call: () => Promise<T>): Promise<T> =>
    inSpan(`provider ${operation}`, { 'fleet.provider': provider.name, 'fleet.operation': operation }, async () => {
      const started = performance.now();
      try {
        const result = await call();
        void metrics.providerCall(provider.name, operation, 'ok', performance.now() - started);
        return result;
      } catch (error) {
        void metrics.providerCall(provider.name, operation, outcomeOf(error), performance.now() - started);
        throw error;
      }
    });
  const wrapped: Record<string, unknown> = { name: provider.name, handleKind: provider.handleKind };
  for (const operation of PROVIDER_OPERATIONS) {
    const method = provider[operation] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (!method) continue;
    wrapped[operation] = (...args: unknown[]) => observed(operation, () => method.apply(provider, args));
  }
  if (provider.listTree) {
    wrapped.listTree = async (handle: string, signal: AbortSignal) => observedTree(await observed('listTree', () => provider.listTree!(handle, signal)), observed);
  }
  return wrapped as unknown as SandboxProvider;
}

// A listed tree whose listings and fetches are timed (the rest passes through).
function observedTree(tree: ListedTree, observed: <T>(operation: string, call: () => Promise<T>) => Promise<T>): ListedTree {
  return {
    list: (signal) => observed('listTree.list', () => tree.list(signal)),
    fetch: (wanted, sink, signal) => observed('listTree.fetch', () => tree.fetch(wanted, sink, signal)),
    loadIndex: (revision) => tree.loadIndex(revision),
    saveIndex: (revision, index) => tree.saveIndex(revision, index),
    transfer: () => tree.transfer(),
    release: () => tree.release(),
  };
}
