/**
 * The Vercel provider, loaded on first use: `@vercel/sandbox` and its dependencies take about a
 * second to import, which every CLI command and every worker would otherwise pay even when no
 * workspace lives on Vercel.
 */
import type { Config } from '../../config.js';
import { OPTIONAL_PROVIDER_METHODS, PROVIDER_METHODS, type SandboxProvider } from '../sandbox-provider.js';
import type { VercelProviderOptions } from './vercel-provider.js';

export function lazyVercelProvider(config: Config, options: Partial<Omit<VercelProviderOptions, 'connection'>>): SandboxProvider {
  let loaded: Promise<SandboxProvider> | null = null;
  const load = () => (loaded ??= import('./vercel-provider.js').then(({ createVercelProvider }) => createVercelProvider(config, options)));
  const provider: Record<string, unknown> = { name: 'vercel', handleKind: 'persistent-name' };
  // The Vercel provider has every optional method too.
  for (const method of [...PROVIDER_METHODS, ...OPTIONAL_PROVIDER_METHODS]) {
    provider[method] = async (...args: unknown[]) => {
      const real = (await load()) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      return real[method]!(...args);
    };
  }
  return provider as unknown as SandboxProvider;
}
