// A workspace harness whose default provider is Vercel: the real @vercel/sandbox SDK against a
// loopback stand-in started for the test (closed when it ends).
import { addCleanup } from './cleanup.js';
import { VercelStandin } from './vercel-standin/vercel-standin.js';
import { createHarness, type Harness } from './workspace-harness.js';

/** The fleet environment of Vercel as the default provider, on `standin` (also for child processes). */
export function standinEnv(standin: VercelStandin): Record<string, string> {
  return {
    FLEET_PROVIDER: 'vercel',
    FLEET_VERCEL_TOKEN: standin.credentials.token,
    FLEET_VERCEL_TEAM_ID: standin.credentials.teamId,
    FLEET_VERCEL_PROJECT_ID: standin.credentials.projectId,
    FLEET_VERCEL_API_URL: standin.url,
  };
}

export async function createVercelHarness(overrides: Record<string, string> = {}): Promise<{ standin: VercelStandin; h: Harness }> {
  const standin = await VercelStandin.start();
  addCleanup(() => standin.close());
  const h = await createHarness({ ...standinEnv(standin), ...overrides });
  return { standin, h };
}
