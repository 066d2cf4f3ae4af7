// `fleet web` as its own process (the Procfile's `web`): prints its address, serves the API and
// /metrics for workers in other processes, and stops cleanly on SIGTERM.
import { describe, expect, it } from 'vitest';
import { testEnv } from '../helpers/fleet-env.js';
import { startFleet, cliJson } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

describe('fleet web', () => {
  it('serves the API and fleet-wide metrics of a separate worker process; SIGTERM exits 0', async () => {
    const env = await testEnv({ FLEET_HTTP_PORT: '0', FLEET_ADMIN_PASSWORD: 'pw-for-the-e2e-test' });
    const web = startFleet(['web'], env);
    await web.waitForOutput(/^web http:\/\/127\.0\.0\.1:\d+$/m);
    const url = /^web (http:\/\/\S+)$/m.exec(web.stdout())![1]!;
    const worker = startFleet(['worker', '--queues', 'gc'], env);
    await worker.waitForOutput('serving gc');

    const done = await fetch(`${url}/v1/gc?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'litter', dryRun: true }) });
    expect(done.status).toBe(200);
    // The worker process recorded the job; the web process reads it back.
    const metrics = await waitFor('the gc job in /metrics', async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return /fleet_jobs_total\{queue="gc",outcome="completed"\} [1-9]/.test(text) ? text : undefined;
    });
    expect(metrics).toMatch(/^fleet_workers 1$/m);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(web.stderr()).toContain('unauthenticated and answers loopback clients only');
    expect(web.stdout()).toContain(`board ${url}/admin/queues`);

    web.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect((await web.exited).code).toBe(0);
    expect((await worker.exited).code).toBe(0);
  });

  it('says at start-up that Bull Board is disabled without FLEET_ADMIN_PASSWORD', async () => {
    const env = await testEnv({ FLEET_HTTP_PORT: '0', FLEET_LOG_LEVEL: 'info' });
    const web = startFleet(['web', '--json'], env);
    await web.waitForOutput('"url"');
    expect(cliJson(web.stdout())).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), board: null });
    await waitFor('the disabled-board log line', () => (web.stderr().includes('Bull Board disabled: FLEET_ADMIN_PASSWORD is not set') ? true : undefined));
    const human = startFleet(['web'], { ...env, FLEET_LOG_LEVEL: 'warn' });
    await human.waitForOutput('board disabled (set FLEET_ADMIN_PASSWORD to enable Bull Board)');
    const humanUrl = /^web (http:\/\/\S+)$/m.exec(human.stdout())![1]!;
    expect((await fetch(`${humanUrl}/healthz`)).status).toBe(200);
    human.child.kill('SIGTERM');
    const humanExit = await human.exited;
    expect(humanExit, human.stderr()).toEqual({ code: 0, signal: null });
    web.child.kill('SIGTERM');
    expect((await web.exited).code).toBe(0);
  });

  it('SIGTERM lets a ?wait=true request in flight finish (its job runs after the signal) before the process exits', async () => {
    const env = await testEnv({ FLEET_HTTP_PORT: '0', FLEET_SHUTDOWN_GRACE_MS: '60000', FLEET_LOG_LEVEL: 'info' });
    const web = startFleet(['web'], env);
    await web.waitForOutput(/^web http:\/\/127\.0\.0\.1:\d+$/m);
    const url = /^web (http:\/\/\S+)$/m.exec(web.stdout())![1]!;
    // No worker serves gc yet: the call waits for its job.
    const inFlight = fetch(`${url}/v1/gc?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'litter', dryRun: true }) });
    await waitFor('the gc job to wait in its queue', async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return /^fleet_queue_jobs\{queue="gc",state="waiting"\} 1$/m.test(text) ? true : undefined;
    });
    web.child.kill('SIGTERM');
    await waitFor('the web process to begin its shutdown', () => (web.stderr().includes('shutting down gracefully') ? true : undefined));
    // The job runs only now, after the signal; the request still gets its answer.
    const worker = startFleet(['worker', '--queues', 'gc'], env);
    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ queue: 'gc', result: expect.any(Object) });
    expect((await web.exited).code).toBe(0);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });

  it('logs readable lines with FLEET_LOG_FORMAT=pretty, JSON lines into a pipe by default (auto)', async () => {
    const env = await testEnv({ FLEET_LOG_LEVEL: 'info' });
    const pretty = startFleet(['worker', '--queues', 'gc'], { ...env, FLEET_LOG_FORMAT: 'pretty' });
    await pretty.waitForOutput('serving gc');
    await waitFor('the readable start-up line', () => (/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: workers started$/m.test(pretty.stderr()) ? true : undefined));
    expect(pretty.stderr()).not.toMatch(/^\{/m);
    const auto = startFleet(['worker', '--queues', 'gc'], env);
    await auto.waitForOutput('serving gc');
    const line = await waitFor('the JSON start-up line', () => auto.stderr().split('\n').find((l) => l.includes('"workers started"')));
    expect(JSON.parse(line)).toMatchObject({ level: 30, component: 'worker', msg: 'workers started' });
    for (const p of [pretty, auto]) {
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    }
  });
});
