/**
 * Which provider serves an address or a new workspace. Built once per process; the Vercel
 * provider is created only when configured.
 */
import { FleetError } from '../errors/fleet-error.js';
import type { ProviderName, SandboxProvider } from './sandbox-provider.js';

/** Thrown when a provider is needed but not configured in this process. */
export class ProviderUnavailableError extends FleetError {
  readonly code = 'ProviderUnavailable';
  readonly retryable = false;
}

export class ProviderRegistry {
  readonly #providers = new Map<ProviderName, SandboxProvider>();

  constructor(providers: readonly SandboxProvider[]) {
    for (const provider of providers) this.#providers.set(provider.name, provider);
  }

  get(name: ProviderName): SandboxProvider {
    const provider = this.#providers.get(name);
    if (!provider) throw new ProviderUnavailableError(`provider ${name} is not configured in this process`, { context: { provider: name } });
    return provider;
  }

  has(name: ProviderName): boolean {
    return this.#providers.has(name);
  }

  all(): SandboxProvider[] {
    return [...this.#providers.values()];
  }
}
