// One id from an app pod's HTTP call to every log line of the jobs it caused, through a running
// `fleet up`, for each provider: the answer carries X-Request-Id, the access log has the request,
// and the provision and persist jobs log with the same `reqId`; an unusable id is replaced.
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { testEnv } from '../helpers/fleet-env.js';
import { killGroup, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { providerEnv } from '../helpers/vercel-standin/standin-env.js';

interface LogLine {
  level: number;
  job?: string;
  msg: string;
  reqId?: string;
  queue?: string;
  jobId?: string;
  method?: string;
  route?: string;
  path?: string;
  status?: number;
  durationMs?: number;
}

const lines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

describe.each(['local', 'vercel'] as const)('request ids (%s)', (provider) => {
  it('carries X-Request-Id into the access log and every log line of the jobs it enqueued', { timeout: 120_000 }, async () => {
    const extra = await providerEnv(provider);
    const env = await testEnv({ ...extra, FLEET_HTTP_PORT: '0', FLEET_LOG_LEVEL: 'debug', FLEET_LOG_FORMAT: 'json', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const up = startFleet(['up'], env);
    addCleanup(() => killGroup(up.child, 'SIGKILL'));
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;

    const provisioned = await fetch(`${web}/v1/workspaces/demo/provision?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'pod-7.call-1' }, body: '{}' });
    expect(provisioned.status).toBe(200);
    expect(provisioned.headers.get('x-request-id')).toBe('pod-7.call-1');
    const provisionJob = (await provisioned.json()) as { queue: string; jobId: string };

    // The first checkpoint tick's persist runs right after the provision: let it finish, so the
    // persist below starts its own job instead of joining that one (its access line names the job
    // either way).
    await waitFor('the first checkpoint persist', () => lines(up.stderr()).find((l) => l.queue?.startsWith('persist@') && l.msg === 'job completed'), 60_000);
    // No id, or one that is not a plain id: a new UUID, and that one is what the jobs carry.
    const persisted = await fetch(`${web}/v1/workspaces/demo/persist?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'not a plain id' }, body: JSON.stringify({ generation: 1, reason: 'turn-end' }) });
    expect(persisted.status).toBe(200);
    const persistReq = persisted.headers.get('x-request-id')!;
    expect(persistReq).toMatch(/^[0-9a-f-]{36}$/);
    const persistJob = (await persisted.json()) as { queue: string; jobId: string };

    const access = await waitFor('both access-log lines', () => {
      const found = lines(up.stderr()).filter((l) => l.msg === 'request' && l.method === 'POST');
      return found.length >= 2 ? found : undefined;
    });
    expect(access[0]).toMatchObject({ reqId: 'pod-7.call-1', route: '/v1/workspaces/:workspaceId/provision', path: '/v1/workspaces/demo/provision', status: 200, durationMs: expect.any(Number), job: `provision/${provisionJob.jobId}` });
    expect(access[1]).toMatchObject({ reqId: persistReq, path: '/v1/workspaces/demo/persist', status: 200, job: `${persistJob.queue}/${persistJob.jobId}` });

    const all = lines(up.stderr());
    // Job ids count per queue: a job is its queue and its id.
    const ofJob = (job: { queue: string; jobId: string }) => all.filter((l) => l.queue === job.queue && l.jobId === job.jobId);
    expect(ofJob(provisionJob).length).toBeGreaterThan(0);
    expect(ofJob(provisionJob).filter((l) => l.reqId !== 'pod-7.call-1')).toEqual([]);
    expect(ofJob(persistJob).length).toBeGreaterThan(0);
    expect(ofJob(persistJob).filter((l) => l.reqId !== persistReq)).toEqual([]);
    // Probes are quiet at info: the readiness poll of `fleet up` logged at debug only.
    const probe = await fetch(`${web}/healthz`);
    expect(probe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const probeLine = await waitFor('the probe line', () => lines(up.stderr()).find((l) => l.path === '/healthz'));
    expect(probeLine.level).toBe(20);

    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
  });
});
