// The fleet environment of Vercel as the default provider on a stand-in (tests, child processes, benchmarks).
import type { VercelStandin } from './vercel-standin.js';

export function standinEnv(standin: VercelStandin): Record<string, string> {
  return {
    FLEET_PROVIDER: 'vercel',
    FLEET_VERCEL_TOKEN: standin.credentials.token,
    FLEET_VERCEL_TEAM_ID: standin.credentials.teamId,
    FLEET_VERCEL_PROJECT_ID: standin.credentials.projectId,
    FLEET_VERCEL_API_URL: standin.url,
  };
}

/**
 * The environment a test fleet needs for `provider`: nothing for `local`; for `vercel`, a running
 * stand-in (closed when the test ends) as the default provider.
 */
export async function providerEnv(provider: 'local' | 'vercel'): Promise<Record<string, string>> {
  return (await providerUnderTest(provider)).env;
}

/** `providerEnv`, with the stand-in itself (null for `local`), for a test that acts at the provider. */
export async function providerUnderTest(provider: 'local' | 'vercel'): Promise<{ readonly env: Record<string, string>; readonly standin: VercelStandin | null }> {
  if (provider === 'local') return { env: {}, standin: null };
  const { VercelStandin } = await import('./vercel-standin.js');
  const { addCleanup } = await import('../cleanup.js');
  const standin = await VercelStandin.start();
  addCleanup(() => standin.close());
  return { env: standinEnv(standin), standin };
}
