// A provider that forwards to a real one except for the methods a test overrides (an optional
// method overridden with `undefined` is left out).
import { OPTIONAL_PROVIDER_METHODS, PROVIDER_METHODS, type SandboxProvider } from '../../src/providers/sandbox-provider.js';

export function delegatingProvider(real: SandboxProvider, overrides: Partial<SandboxProvider>): SandboxProvider {
  const wrapper: Record<string, unknown> = { name: real.name, handleKind: real.handleKind };
  for (const method of PROVIDER_METHODS) {
    const own = overrides[method];
    wrapper[method] = own ?? (real[method] as (...args: unknown[]) => unknown).bind(real);
  }
  for (const method of OPTIONAL_PROVIDER_METHODS) {
    // An override given as `undefined` hides the real provider's method.
    if (method in overrides) {
      if (overrides[method]) wrapper[method] = overrides[method];
    } else if (real[method]) wrapper[method] = real[method].bind(real);
  }
  return wrapper as unknown as SandboxProvider;
}
