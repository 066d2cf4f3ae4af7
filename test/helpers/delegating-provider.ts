// A provider that forwards to a real one except for the methods a test overrides.
import { PROVIDER_METHODS, type SandboxProvider } from '../../src/providers/sandbox-provider.js';

export function delegatingProvider(real: SandboxProvider, overrides: Partial<SandboxProvider>): SandboxProvider {
  const wrapper: Record<string, unknown> = { name: real.name, handleKind: real.handleKind };
  for (const method of PROVIDER_METHODS) {
    const own = overrides[method];
    wrapper[method] = own ?? (real[method] as (...args: unknown[]) => unknown).bind(real);
  }
  return wrapper as unknown as SandboxProvider;
}
