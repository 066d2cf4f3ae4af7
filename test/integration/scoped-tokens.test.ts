// Scoped tokens on every route of the table (routes added later are covered by the same loop): a
// token outside its scope is 403 and nothing is enqueued or written; inside it, never 401/403.
import { readdir } from 'node:fs/promises';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/http/api-routes.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness, type WebHarness } from '../helpers/web-harness.js';

const FULL = 'full-token-aaaaaaaaaaaa';
const TEAM_A = 'team-a-token-bbbbbbbbbb';
const OPS = 'ops-token-cccccccccccccc';

// A request to `route` for workspace `ws`, with a body that passes validation where one is needed.
function requestFor(h: WebHarness, route: (typeof API_ROUTES)[number], ws: string, token: string) {
  const path = route.path.replace('{workspaceId}', ws).replace('{path}', 'f.txt').replace('{queue}', 'gc').replace('{jobId}', '1');
  const method = route.method.toUpperCase();
  if (route.bodyKind === 'bytes') return h.request(path, { method, body: 'x', token });
  if (method === 'POST' || method === 'PUT') return h.request(path, { method, json: {}, token });
  return h.request(path, { method, token });
}

describe('scoped API tokens', () => {
  it('refuses a token outside its scope on every route (403, nothing enqueued or written) and admits it inside', async () => {
    const h = await createWebHarness({ FLEET_API_TOKENS: `${FULL},${TEAM_A};scope=app;workspaces=team-a-*,${OPS};scope=operator` });
    await testWorkers(h.config, ['provision', 'persist']);
    expect((await answer(h.request('/v1/workspaces/team-b-1/provision?wait=true', { json: {}, token: FULL }))).status).toBe(200);
    const liveBefore = await readdir(h.live('team-b-1'));

    for (const route of API_ROUTES) {
      const named = route.path.includes('{workspaceId}');
      // The team token: never another team's workspace, never a route naming no workspace, never an operator route.
      if (route.filtersWorkspaces && route.produces === 'text/event-stream') {
        // A stream never ends by itself: its answer is admitted; what it shows is filtered (test/integration/event-routes.test.ts).
        const stream = await requestFor(h, route, 'team-b-1', TEAM_A);
        expect(stream.status, route.operationId).toBe(200);
        await stream.body?.cancel();
        continue;
      }
      const outside = await answer(requestFor(h, route, 'team-b-1', TEAM_A));
      if (route.filtersWorkspaces) {
        // A listing admits the token and shows only its workspaces.
        expect(outside.status, route.operationId).toBe(200);
        expect(JSON.stringify(outside.body), route.operationId).not.toContain('team-b-1');
        continue;
      }
      expect(outside.status, `${route.operationId} with the team-a token on team-b-1`).toBe(403);
      expect(outside.body.error.code).toBe('Forbidden');
      if (named && route.scope === 'app') {
        const inside = await answer(requestFor(h, route, 'team-a-1', TEAM_A));
        expect([401, 403], `${route.operationId} with the team-a token on team-a-1`).not.toContain(inside.status);
      }
      // The operator token: operator routes only.
      const ops = await answer(requestFor(h, route, 'team-b-1', OPS));
      if (route.scope === 'app') expect(ops.status, `${route.operationId} with the operator token`).toBe(403);
      else expect([401, 403]).not.toContain(ops.status);
    }
    // Nothing the refused requests named was enqueued or written: team-b-1 has its one provision, its tree is as it was.
    const gc = new Queue('provision', { connection: h.services.redis, prefix: h.services.keys.queuePrefix('provision') });
    const provisions = (await gc.getJobs(['waiting', 'active', 'completed', 'failed', 'delayed'])).map((j) => j.data.workspaceId);
    await gc.close();
    expect(provisions.filter((ws) => ws === 'team-b-1')).toHaveLength(1);
    expect(await readdir(h.live('team-b-1'))).toEqual(liveBefore);
  });
});
