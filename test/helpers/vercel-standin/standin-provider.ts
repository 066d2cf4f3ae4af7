// Builds the real Vercel provider (real SDK) pointed at a stand-in through Config, exactly as
// production does: FLEET_VERCEL_* variables → loadConfig → createVercelProvider.
import { loadConfig } from '../../../src/config.js';
import { createVercelProvider, type VercelProvider, type VercelProviderOptions } from '../../../src/providers/vercel/vercel-provider.js';
import type { VercelStandin } from './vercel-standin.js';

export function standinProvider(standin: VercelStandin, options: Omit<VercelProviderOptions, 'connection'> = {}, overrides: Record<string, string> = {}): VercelProvider {
  const config = loadConfig({
    FLEET_PROVIDER: 'vercel',
    FLEET_VERCEL_TOKEN: standin.credentials.token,
    FLEET_VERCEL_TEAM_ID: standin.credentials.teamId,
    FLEET_VERCEL_PROJECT_ID: standin.credentials.projectId,
    FLEET_VERCEL_API_URL: standin.url,
    ...overrides,
  });
  return createVercelProvider(config, { pollIntervalMs: 20, ...options });
}
