import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors/config-error.js';
import { apiUrlFetch, rewriteApiUrl } from '../../src/providers/vercel/api-url-fetch.js';
import { vercelConnection } from '../../src/providers/vercel/vercel-connection.js';

// A JWT-shaped token with the claims Vercel OIDC tokens carry (unsigned: only the claims matter).
function fakeOidc(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.sig`;
}

describe('vercelConnection', () => {
  it('uses token, team and project as configured, and no fetch without an API URL', () => {
    const config = loadConfig({ FLEET_VERCEL_TOKEN: 'tok', FLEET_VERCEL_TEAM_ID: 'team_1', FLEET_VERCEL_PROJECT_ID: 'prj_1' });
    expect(vercelConnection(config.vercel)).toEqual({ token: 'tok', teamId: 'team_1', projectId: 'prj_1', fetch: undefined });
  });

  it('reads team and project from the OIDC token claims', () => {
    const token = fakeOidc({ owner_id: 'team_oidc', project_id: 'prj_oidc' });
    const connection = vercelConnection(loadConfig({ VERCEL_OIDC_TOKEN: token }).vercel);
    expect(connection).toMatchObject({ token, teamId: 'team_oidc', projectId: 'prj_oidc' });
  });

  it('refuses incomplete credentials with a ConfigError instead of any interactive login', () => {
    expect(() => vercelConnection(loadConfig({}).vercel)).toThrow(ConfigError);
    expect(() => vercelConnection(loadConfig({ FLEET_VERCEL_TOKEN: 'tok', FLEET_VERCEL_TEAM_ID: 'team' }).vercel)).toThrow(/FLEET_VERCEL_PROJECT_ID/);
    expect(() => vercelConnection(loadConfig({ VERCEL_OIDC_TOKEN: 'not-a-jwt' }).vercel)).toThrow(/VERCEL_OIDC_TOKEN/);
  });

  it('routes SDK requests to FLEET_VERCEL_API_URL through the public fetch option', async () => {
    const seen: { url: string; init: RequestInit | undefined }[] = [];
    const base: typeof fetch = async (input, init) => {
      seen.push({ url: String(input), init });
      return new Response('{}');
    };
    const wrapped = apiUrlFetch('http://127.0.0.1:9/', base);
    const init = { method: 'POST', body: '{}' };
    await wrapped('https://vercel.com/api/v2/sandboxes?teamId=t', init);
    expect(seen).toEqual([{ url: 'http://127.0.0.1:9/v2/sandboxes?teamId=t', init }]);
    const connection = vercelConnection(loadConfig({ FLEET_VERCEL_TOKEN: 't', FLEET_VERCEL_TEAM_ID: 'a', FLEET_VERCEL_PROJECT_ID: 'b', FLEET_VERCEL_API_URL: 'http://proxy.local/api' }).vercel);
    expect(connection.fetch).toBeTypeOf('function');
  });
});

describe('rewriteApiUrl', () => {
  it.each([
    ['https://vercel.com/api/v3/sandboxes', 'http://h:1', 'http://h:1/v3/sandboxes'],
    ['https://vercel.com/api/v2/sandboxes/a%20b?teamId=t&resume=true', 'http://h:1/prefix/', 'http://h:1/prefix/v2/sandboxes/a%20b?teamId=t&resume=true'],
    ['https://vercel.com/api?x=1', 'http://h:1', 'http://h:1?x=1'],
    ['https://vercel.com/apix/v2', 'http://h:1', 'https://vercel.com/apix/v2'],
    ['https://example.com/api/v2', 'http://h:1', 'https://example.com/api/v2'],
  ])('%s via %s → %s', (url, apiUrl, expected) => {
    expect(rewriteApiUrl(url, apiUrl)).toBe(expected);
  });
});
