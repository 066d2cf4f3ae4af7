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
