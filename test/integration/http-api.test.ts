// The HTTP API against real workers (provision and persist on real rsync): every route's happy
// path, its validation errors, and the error answers of the edge (415, 400, 413, 404).
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { ProviderPermanentError } from '../../src/providers/provider-errors.js';
import { NotReadyError } from '../../src/errors/not-ready-error.js';
import { testConnection } from '../helpers/fleet-env.js';
import { addCleanup } from '../helpers/cleanup.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

const MANIFEST = { schemaVersion: 1, name: 'node-base', runtime: 'node22' };

// A provisioned workspace with two files, persisted once through the API.
async function persistedWorkspace() {
  const h = await createWebHarness();
  await testWorkers(h.config, ['provision', 'persist']);
  const provisioned = await answer(h.request('/v1/workspaces/ws-1/provision?wait=true', { json: { lane: 'default', requestedBy: 'test' } }));
  expect(provisioned.status).toBe(200);
  await h.write('ws-1', { 'a.txt': 'alpha', 'dir/b.txt': 'beta' });
  const persisted = await answer(h.request('/v1/workspaces/ws-1/persist?wait=true', { json: { generation: 1, delete: true, reason: 'turn-end', turnId: 'turn-1' } }));
  expect(persisted.status).toBe(200);
  return { h, provisioned: provisioned.body, persisted: persisted.body };
}

describe('HTTP API: workspace routes', () => {
  it('provision: 202 without wait, 200 with the result after ?wait=true; invalid fields are 400 with the field', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision']);
    const queued = await answer(h.request('/v1/workspaces/ws-a/provision', { method: 'POST' }));
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ queue: 'provision', jobId: expect.any(String) });
    const done = await answer(h.request('/v1/workspaces/ws-a/provision?wait=true', { json: {} }));
    expect(done.status).toBe(200);
    expect(done.body.result).toMatchObject({ workspaceId: 'ws-a', generation: 1, hostId: 'local', provider: 'local' });
    expect(['created-empty', 'reused']).toContain(done.body.result.outcome);

    const badProvider = await answer(h.request('/v1/workspaces/ws-a/provision', { json: { provider: 'docker' } }));
    expect(badProvider).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'provider' } } });
    const unknownField = await answer(h.request('/v1/workspaces/ws-a/provision', { json: { colour: 'red' } }));
    expect(unknownField).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'colour' } } });
    const badPathId = await answer(h.request('/v1/workspaces/bad%20id/provision', { json: {} }));
    expect(badPathId).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'workspaceId' } } });
    const conflictingId = await answer(h.request('/v1/workspaces/ws-a/provision', { json: { workspaceId: 'ws-b' } }));
    expect(conflictingId).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: 'workspaceId' } } });
  });

  it('exec: runs in the workspace sandbox and answers with the result; 404 without a live sandbox, 400 bad fields, nothing run', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['provision', 'persist']);
    expect((await answer(h.request('/v1/workspaces/ws-x/provision?wait=true', { json: {} }))).status).toBe(200);
    const ran = await answer(h.request('/v1/workspaces/ws-x/exec', { json: { cmd: ['sh', '-c', 'mkdir -p sub && cd sub && echo "$GREETING" > hi.txt && cat hi.txt && exit 3'], env: { GREETING: 'hello' }, timeoutMs: 20_000 } }));
    expect(ran).toMatchObject({ status: 200, body: { workspaceId: 'ws-x', exitCode: 3, stdout: 'hello\n', timedOut: false } });
    expect(await answer(h.request('/v1/workspaces/ws-x/exec', { json: { cmd: ['cat', 'hi.txt'], cwd: 'sub' } }))).toMatchObject({ status: 200, body: { exitCode: 0, stdout: 'hello\n' } });
    expect(await answer(h.request('/v1/workspaces/nobody/exec', { json: { cmd: ['true'] } }))).toMatchObject({ status: 404, body: { error: { code: 'WorkspaceNotFound' } } });
    expect(await answer(h.request('/v1/workspaces/ws-x/exec', { json: {} }))).toMatchObject({ status: 400, body: { error: { field: 'cmd' } } });
    expect(await answer(h.request('/v1/workspaces/ws-x/exec', { json: { cmd: 'touch pwned' } }))).toMatchObject({ status: 400, body: { error: { field: 'cmd' } } });
    expect(await answer(h.request('/v1/workspaces/ws-x/exec', { json: { cmd: ['true'], cwd: '../..' } }))).toMatchObject({ status: 400, body: { error: { field: 'cwd' } } });
    expect(await answer(h.request('/v1/workspaces/ws-x/exec', { json: { cmd: ['true'], timeoutMs: 0 } }))).toMatchObject({ status: 400, body: { error: { field: 'timeoutMs' } } });
    expect(await answer(h.request('/v1/workspaces/ws-x/exec', { json: { cmd: ['true'], shell: true } }))).toMatchObject({ status: 400 });
  });

  it('persist: writes a revision with ?wait=true; 404 unknown workspace, 409 stale generation, 400 bad fields', async () => {
    const { h, persisted } = await persistedWorkspace();
    expect(persisted).toMatchObject({ queue: 'persist@local', result: { workspaceId: 'ws-1', generation: 1, files: 2, unchanged: false } });
    expect(persisted.result.revision).toMatch(/^r\d{8}T/);
    expect(await h.services.archive.current('ws-1')).toBe(persisted.result.revision);

    const queued = await answer(h.request('/v1/workspaces/ws-1/persist', { json: { generation: 1 } }));
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ queue: 'persist@local', seq: expect.any(Number) });

    expect(await answer(h.request('/v1/workspaces/nobody/persist', { json: { generation: 1 } }))).toMatchObject({ status: 404, body: { error: { code: 'WorkspaceNotFound' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/persist', { json: { generation: 7 } }))).toMatchObject({ status: 409, body: { error: { code: 'StaleGeneration' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/persist', { json: {} }))).toMatchObject({ status: 400, body: { error: { field: 'generation' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/persist', { json: { generation: 1, reason: 'whim' } }))).toMatchObject({ status: 400, body: { error: { field: 'reason' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/persist', { json: { generation: 1, delete: 'yes' } }))).toMatchObject({ status: 400, body: { error: { field: 'delete' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/persist', { json: { generation: 1, turnId: 'has space' } }))).toMatchObject({ status: 400, body: { error: { field: 'turnId' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/persist', { json: { generation: 1, force: 1 } }))).toMatchObject({ status: 400, body: { error: { field: 'force' } } });
    // Producer-only fields are not part of the HTTP body.
    expect(await answer(h.request('/v1/workspaces/ws-1/persist', { json: { generation: 1, requestSeq: 9 } }))).toMatchObject({ status: 400, body: { error: { field: 'requestSeq' } } });
  });

  it('describe and revisions: the live incarnation, current revision and lag; 404 for an unknown workspace', async () => {
    const { h, persisted } = await persistedWorkspace();
    const view = await answer(h.request('/v1/workspaces/ws-1'));
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ workspaceId: 'ws-1', generation: 1, currentRevision: persisted.result.revision, revisions: 1, address: { hostId: 'local', generation: 1 }, runtime: { state: 'ready' } });
    expect(typeof view.body.persistLagMs).toBe('number');

    const revisions = await answer(h.request('/v1/workspaces/ws-1/revisions'));
    expect(revisions.status).toBe(200);
    expect(revisions.body.revisions).toHaveLength(1);
    expect(revisions.body.revisions[0]).toMatchObject({ revision: persisted.result.revision, current: true, attached: true, reason: 'turn-end', turnId: 'turn-1', files: 2 });

    expect(await answer(h.request('/v1/workspaces/never-seen'))).toMatchObject({ status: 404, body: { error: { code: 'WorkspaceNotFound' } } });
    expect(await answer(h.request('/v1/workspaces/never-seen/revisions'))).toMatchObject({ status: 404, body: { error: { code: 'WorkspaceNotFound' } } });
    expect(await answer(h.request('/v1/workspaces/a.b'))).toMatchObject({ status: 400, body: { error: { field: 'workspaceId' } } });
  });

  it('checkpoints: start upserts the scheduler on the host queue, stop removes it; bad action is 400', async () => {
    const { h } = await persistedWorkspace();
    const started = await answer(h.request('/v1/workspaces/ws-1/checkpoints', { json: { action: 'start', everyMs: 60_000 } }));
    expect(started).toMatchObject({ status: 200, body: { action: 'start', schedulerId: 'checkpoint:ws-1', queue: 'checkpoint@local' } });
    const queue = new Queue('checkpoint@local', { connection: testConnection(h.config), prefix: h.services.keys.queuePrefix('checkpoint@local') });
    addCleanup(() => queue.close());
    expect(await queue.getJobScheduler('checkpoint:ws-1')).toMatchObject({ every: 60_000 });
    const stopped = await answer(h.request('/v1/workspaces/ws-1/checkpoints', { json: { action: 'stop' } }));
    expect(stopped).toMatchObject({ status: 200, body: { action: 'stop', removed: true } });
    expect(await queue.getJobScheduler('checkpoint:ws-1')).toBeUndefined();

    expect(await answer(h.request('/v1/workspaces/ws-1/checkpoints', { json: { action: 'pause' } }))).toMatchObject({ status: 400, body: { error: { field: 'action' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/checkpoints', { json: { action: 'start', everyMs: 10 } }))).toMatchObject({ status: 400, body: { error: { field: 'everyMs' } } });
    expect(await answer(h.request('/v1/workspaces/ghost/checkpoints', { json: { action: 'start' } }))).toMatchObject({ status: 404, body: { error: { code: 'WorkspaceNotFound' } } });
  });

  it('rollback: enqueues a rollback job on the host queue; bad revision ids are 400; unknown workspace 404', async () => {
    const { h, persisted } = await persistedWorkspace();
    const queued = await answer(h.request('/v1/workspaces/ws-1/rollback', { json: { revision: persisted.result.revision } }));
    expect(queued).toMatchObject({ status: 202, body: { queue: 'persist@local', jobId: expect.any(String) } });
    const queue = new Queue('persist@local', { connection: testConnection(h.config), prefix: h.services.keys.queuePrefix('persist@local') });
    addCleanup(() => queue.close());
    const job = await queue.getJob(queued.body.jobId);
    expect(job?.name).toBe('rollback');
    expect(job?.data).toMatchObject({ workspaceId: 'ws-1', rollbackTo: persisted.result.revision, generation: 1 });

    expect(await answer(h.request('/v1/workspaces/ws-1/rollback', { json: { revision: 'latest' } }))).toMatchObject({ status: 400, body: { error: { field: 'revision' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/rollback', { json: {} }))).toMatchObject({ status: 400, body: { error: { field: 'revision' } } });
    expect(await answer(h.request('/v1/workspaces/ws-1/rollback', { json: { revision: persisted.result.revision, generation: 0 } }))).toMatchObject({ status: 400, body: { error: { field: 'generation' } } });
    expect(await answer(h.request('/v1/workspaces/ghost/rollback', { json: { revision: persisted.result.revision } }))).toMatchObject({ status: 404 });
  });
});

describe('HTTP API: fleet routes', () => {
  it('bake, gc and backfill: 202 and 200 with results; each validation error names its field', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['gc', 'bake', 'backfill'], {
      bake: async (payload) => ({ snapshotId: 'snap-1', lane: (payload as { manifest: { lane: string } }).manifest.lane }),
      backfill: async (payload) => ({ migrated: (payload as { workspaceId: string }).workspaceId }),
    });
    const baked = await answer(h.request('/v1/bake?wait=true', { json: { manifest: MANIFEST } }));
    expect(baked).toMatchObject({ status: 200, body: { queue: 'bake', manifestHash: expect.any(String), result: { snapshotId: 'snap-1', lane: 'default' } } });
    expect(await answer(h.request('/v1/bake', { json: { manifest: MANIFEST, activate: true } }))).toMatchObject({ status: 202 });
    expect(await answer(h.request('/v1/bake', { json: { manifest: { ...MANIFEST, name: 'Bad Name' } } }))).toMatchObject({ status: 400, body: { error: { field: 'manifest.name' } } });
    expect(await answer(h.request('/v1/bake', { json: { manifest: { ...MANIFEST, env: { API_TOKEN: 'x' } } } }))).toMatchObject({ status: 400, body: { error: { field: 'manifest.env.API_TOKEN' } } });
    expect(await answer(h.request('/v1/bake', { json: {} }))).toMatchObject({ status: 400, body: { error: { field: 'manifest' } } });

    const gc = await answer(h.request('/v1/gc?wait=1', { json: { kind: 'litter', dryRun: true } }));
    expect(gc).toMatchObject({ status: 200, body: { queue: 'gc', result: expect.anything() } });
    expect(await answer(h.request('/v1/gc', { json: { kind: 'idle' } }))).toMatchObject({ status: 202 });
    expect(await answer(h.request('/v1/gc', { json: { kind: 'everything' } }))).toMatchObject({ status: 400, body: { error: { field: 'kind' } } });
    expect(await answer(h.request('/v1/gc', { json: { kind: 'litter', limit: 5000 } }))).toMatchObject({ status: 400, body: { error: { field: 'limit' } } });

    const backfill = await answer(h.request('/v1/backfill?wait=true', { json: { kind: 'workspace', workspaceId: 'legacy-1' } }));
    expect(backfill).toMatchObject({ status: 200, body: { queue: 'backfill', result: { migrated: 'legacy-1' } } });
    expect(await answer(h.request('/v1/backfill', { json: { kind: 'sweep', batch: 10 } }))).toMatchObject({ status: 202 });
    expect(await answer(h.request('/v1/backfill', { json: { kind: 'all' } }))).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid' } } });
    expect(await answer(h.request('/v1/backfill', { json: { kind: 'workspace', workspaceId: '../etc' } }))).toMatchObject({ status: 400, body: { error: { field: 'workspaceId' } } });
  });

  it('a job that fails in a worker answers with its code: 409 for conflicts, 502 for other failures', async () => {
    const h = await createWebHarness();
    await testWorkers(h.config, ['bake', 'backfill'], {
      bake: async () => {
        throw new ProviderPermanentError('local', 'snapshot', 'quota exceeded');
      },
      backfill: async () => {
        throw new NotReadyError('legacy-1', 3, null);
      },
    });
    expect(await answer(h.request('/v1/bake?wait=true', { json: { manifest: MANIFEST } }))).toMatchObject({ status: 502, body: { error: { code: 'ProviderPermanent' } } });
    expect(await answer(h.request('/v1/backfill?wait=true', { json: { kind: 'workspace', workspaceId: 'legacy-1' } }))).toMatchObject({ status: 409, body: { error: { code: 'NotReady' } } });
  });
});

describe('HTTP API: the edge', () => {
  it('415 for a non-JSON body, 400 for broken JSON or a non-object, 404 for unknown routes, 400 for a bad wait query', async () => {
    const h = await createWebHarness();
    const textBody = await answer(h.request('/v1/gc', { method: 'POST', body: '{"kind":"litter"}', headers: { 'content-type': 'text/plain' } }));
    expect(textBody).toMatchObject({ status: 415, body: { error: { code: 'UnsupportedMediaType' } } });
    const noType = await answer(h.request('/v1/gc', { method: 'POST', body: '{"kind":"litter"}' }));
    expect(noType.status).toBe(415);
    const broken = await answer(h.request('/v1/gc', { method: 'POST', body: '{"kind":', headers: { 'content-type': 'application/json' } }));
    expect(broken).toMatchObject({ status: 400, body: { error: { code: 'InvalidJson' } } });
    const array = await answer(h.request('/v1/gc', { json: ['litter'] }));
    expect(array).toMatchObject({ status: 400, body: { error: { code: 'PayloadInvalid', field: '' } } });
    expect(await answer(h.request('/v1/nothing-here'))).toMatchObject({ status: 404, body: { error: { code: 'NotFound' } } });
    expect(await answer(h.request('/v1/gc'))).toMatchObject({ status: 404 });
    expect(await answer(h.request('/v1/gc?wait=maybe', { json: { kind: 'litter' } }))).toMatchObject({ status: 400, body: { error: { field: 'wait' } } });
    expect(await answer(h.request('/v1/gc?timeoutMs=-5', { json: { kind: 'litter' } }))).toMatchObject({ status: 400, body: { error: { field: 'timeoutMs' } } });
    expect(await answer(h.request('/v1/gc?colour=red', { json: { kind: 'litter' } }))).toMatchObject({ status: 400, body: { error: { field: 'colour' } } });
  });

  it('413 for a body over FLEET_HTTP_BODY_LIMIT_BYTES', async () => {
    const h = await createWebHarness({ FLEET_HTTP_BODY_LIMIT_BYTES: '1024' });
    const big = await answer(h.request('/v1/bake', { json: { manifest: { ...MANIFEST, setup: ['x'.repeat(4096)] } } }));
    expect(big).toMatchObject({ status: 413, body: { error: { code: 'PayloadTooLarge' } } });
    const small = await answer(h.request('/v1/gc', { json: { kind: 'litter' } }));
    expect(small.status).toBe(202);
  });

  it('?wait=true is cut to FLEET_HTTP_WAIT_CAP_MS: 504 WaitTimeout, and the job keeps running', async () => {
    const h = await createWebHarness({ FLEET_HTTP_WAIT_CAP_MS: '300' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = false;
    await testWorkers(h.config, ['bake'], {
      bake: async () => {
        started = true;
        await gate;
        return { snapshotId: 'late' };
      },
    });
    addCleanup(() => release());
    const timedOut = await answer(h.request('/v1/bake?wait=true&timeoutMs=600000', { json: { manifest: MANIFEST } }));
    expect(timedOut).toMatchObject({ status: 504, body: { error: { code: 'WaitTimeout' } } });
    expect(timedOut.body.error.message).toContain('after 300 ms');
    expect(started).toBe(true);
    const queue = new Queue('bake', { connection: testConnection(h.config), prefix: h.services.keys.queuePrefix('bake') });
    addCleanup(() => queue.close());
    const [job] = await queue.getJobs(['active']);
    expect(job).toBeDefined();
    release();
  });
});
