/**
 * The provider of one workspace's incarnation with its execs and file operations counted as
 * activity: each holds an activity lease while it runs (so a 20-minute command keeps the
 * workspace from being reaped) and records activity when it starts and ends. Every other method
 * is forwarded untouched.
 */
import type { ActivityKind, ActivityStore } from '../state/activity-store.js';
import type { AddressStore } from '../state/address-store.js';
import { OPTIONAL_PROVIDER_METHODS, PROVIDER_METHODS, type SandboxProvider } from './sandbox-provider.js';

export interface ActivityDeps {
  readonly activity: ActivityStore;
  readonly addresses: Pick<AddressStore, 'touch'>;
}

const TRACKED: readonly ActivityKind[] = ['exec', 'writeFiles', 'readFile'];

export function activityTrackedProvider(provider: SandboxProvider, deps: ActivityDeps, workspaceId: string): SandboxProvider {
  const wrapped: Record<string, unknown> = { name: provider.name, handleKind: provider.handleKind };
  for (const method of PROVIDER_METHODS) {
    const real = (provider[method] as (...args: unknown[]) => Promise<unknown>).bind(provider);
    if (!(TRACKED as readonly string[]).includes(method)) {
      wrapped[method] = real;
      continue;
    }
    wrapped[method] = async (...args: unknown[]) => {
      await deps.addresses.touch(workspaceId);
      try {
        return await deps.activity.during(workspaceId, method as ActivityKind, () => real(...args));
      } finally {
        await deps.addresses.touch(workspaceId).catch(() => undefined);
      }
    };
  }
  for (const method of OPTIONAL_PROVIDER_METHODS) if (provider[method]) wrapped[method] = provider[method].bind(provider);
  return wrapped as unknown as SandboxProvider;
}
