// Bearer tokens on the API, loopback-only without tokens, the OpenAPI document, and health.
import { validate, compileErrors } from '@readme/openapi-parser';
import { chmod } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { Queue } from 'bullmq';
import { addCleanup } from '../helpers/cleanup.js';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../src/http/api-routes.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

const TOKEN = 'token-aaaaaaaaaaaaaaaa';
const OTHER = 'token-bbbbbbbbbbbbbbbb';

describe('API authentication', () => {
  it('with FLEET_API_TOKENS: 401 without or with a wrong token, 2xx with any configured token', async () => {
    const h = await createWebHarness({ FLEET_API_TOKENS: `${TOKEN},${OTHER}` });
    const missing = await answer(h.request('/v1/gc', { json: { kind: 'litter' } }));
    expect(missing).toMatchObject({ status: 401, body: { error: { code: 'Unauthorized' } } });
    expect(missing.headers.get('www-authenticate')).toContain('Bearer');
    expect(await answer(h.request('/v1/gc', { json: { kind: 'litter' }, token: 'token-cccccccccccccccc' }))).toMatchObject({ status: 401 });
    expect(await answer(h.request('/v1/gc', { json: { kind: 'litter' }, token: TOKEN.slice(0, -1) }))).toMatchObject({ status: 401 });
    expect(await answer(h.request('/v1/gc', { json: { kind: 'litter' }, headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } }))).toMatchObject({ status: 401 });
    expect(await answer(h.request('/v1/workspaces/ws'))).toMatchObject({ status: 401 });
    // Auth comes before validation: an unauthenticated bad body learns nothing about the schema.
    expect(await answer(h.request('/v1/gc', { json: { kind: 'nope' } }))).toMatchObject({ status: 401 });
    expect((await answer(h.request('/v1/gc', { json: { kind: 'litter' }, token: TOKEN }))).status).toBe(202);
    expect((await answer(h.request('/v1/gc', { json: { kind: 'idle' }, token: OTHER }))).status).toBe(202);
    // Operational endpoints stay open (scrapers and probes).
    expect((await h.request('/healthz')).status).toBe(200);
    expect((await h.request('/openapi.json')).status).toBe(200);
  });

  it('without tokens the API is open to loopback clients only; on FLEET_HTTP_HOST=0.0.0.0 other addresses reach the probes and /metrics alone', async () => {
    const loopbackOnly = await createWebHarness();
    expect(loopbackOnly.web.host).toBe('127.0.0.1');
    const h = await createWebHarness({ FLEET_HTTP_HOST: '0.0.0.0', FLEET_ADMIN_PASSWORD: 'board-password-for-tests' });
    expect(h.web.host).toBe('0.0.0.0');
    expect((await answer(h.request('/v1/gc', { json: { kind: 'litter' } }))).status).toBe(202);
    // The same server through this machine's own non-loopback address: the peer is not loopback.
    const outside = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    expect(outside, 'this test needs a non-loopback IPv4 address on the machine').toBeDefined();
    const base = `http://${outside}:${h.web.port}`;
    const gc = new Queue('gc', { connection: h.services.redis, prefix: h.config.redis.prefix });
    addCleanup(() => gc.close());
    const counts = async () => (await gc.getJobCounts()) as Record<string, number>;
    const before = await counts();
    const refused = await fetch(`${base}/v1/gc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":"litter"}' });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'Forbidden', message: expect.stringContaining('/v1/gc answers loopback clients only while FLEET_API_TOKENS is unset') } });
    expect(await counts()).toEqual(before);
    for (const target of ['/v1/workspaces', '/openapi.json', '/admin/queues']) expect((await fetch(`${base}${target}`)).status, target).toBe(403);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect([200, 503]).toContain((await fetch(`${base}/readyz`)).status);
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('fleet_build_info');
  });
});

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document listing every route with its body schema and error answers', async () => {
    const h = await createWebHarness();
    const { status, body: doc } = await answer(h.request('/openapi.json'));
    expect(status).toBe(200);
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);

    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(listed.sort()).toEqual(API_ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`).sort());
    expect(listed).toEqual(
      expect.arrayContaining([
        'POST /v1/workspaces/{workspaceId}/provision',
        'POST /v1/workspaces/{workspaceId}/persist',
        'POST /v1/workspaces/{workspaceId}/checkpoints',
        'POST /v1/workspaces/{workspaceId}/turns',
        'POST /v1/workspaces/{workspaceId}/checkpoints/reject',
        'POST /v1/workspaces/{workspaceId}/exec',
        'GET /v1/workspaces/{workspaceId}',
        'GET /v1/workspaces/{workspaceId}/revisions',
        'POST /v1/workspaces/{workspaceId}/rollback',
        'POST /v1/bake',
        'POST /v1/gc',
        'POST /v1/backfill',
        'GET /v1/workspaces/{workspaceId}/diff',
        'GET /v1/workspaces/{workspaceId}/files/{path}/history',
        'POST /v1/workspaces/{workspaceId}/files/{path}/restore',
      ]),
    );
    // Every success answer is typed: a schema with properties (or a byte/stream content type), never a bare object.
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const status of ['200', '202'].filter((s) => op.responses[s])) {
          const content = op.responses[status]!.content!;
          const json = content['application/json'];
          if (!json) continue;
          const schema = json.schema;
          expect(schema.type === 'object' && !schema.properties && !schema.additionalProperties && !schema.anyOf && !schema.oneOf, `${method} ${path} ${status} is untyped`).toBe(false);
        }
      }
    }
    expect(listed).toHaveLength(API_ROUTES.length);
    const persist = doc.paths['/v1/workspaces/{workspaceId}/persist'].post;
    const schema = persist.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(['generation']);
    expect(Object.keys(schema.properties).sort()).toEqual(['delete', 'force', 'generation', 'reason', 'turnId']);
    expect(schema.properties.reason.enum).toContain('turn-end');
    expect(Object.keys(persist.responses).sort()).toEqual(['200', '202', '400', '401', '403', '404', '409', '413', '415', '500', '502', '503', '504']);
    expect(persist.parameters.map((p: { name: string }) => p.name)).toEqual(['workspaceId', 'wait', 'timeoutMs']);
    const exec = doc.paths['/v1/workspaces/{workspaceId}/exec'].post.requestBody.content['application/json'].schema;
    expect(exec.required).toEqual(['cmd']);
    expect(Object.keys(exec.properties).sort()).toEqual(['cmd', 'cwd', 'env', 'stdin', 'timeoutMs']);
    // The streamed answers are documented beside the JSON one, each item typed.
    const execOk = doc.paths['/v1/workspaces/{workspaceId}/exec'].post.responses['200'].content;
    expect(Object.keys(execOk).sort()).toEqual(['application/json', 'application/x-ndjson', 'text/event-stream']);
    expect(execOk['application/x-ndjson']['x-item-schema'].oneOf ?? execOk['application/x-ndjson']['x-item-schema'].anyOf).toHaveLength(5);
    const events = doc.paths['/v1/events'].get;
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
    expect(events.parameters.map((p: { name: string }) => p.name)).toEqual(['workspaceId', 'types', 'since']);
    const diff = doc.paths['/v1/workspaces/{workspaceId}/diff'].get;
    expect(diff.parameters.map((p: { name: string; required: boolean }) => `${p.name}${p.required ? '' : '?'}`)).toEqual(['workspaceId', 'from', 'to?', 'limit?']);
    expect(Object.keys(diff.responses['200'].content['application/json'].schema.properties).sort()).toEqual(['added', 'changed', 'counts', 'deleted', 'from', 'to', 'treesRead', 'truncated', 'workspaceId']);
    expect(Object.keys(diff.responses)).toContain('501');
    const history = doc.paths['/v1/workspaces/{workspaceId}/files/{path}/history'].get;
    expect(history.parameters.map((p: { name: string }) => p.name)).toEqual(['workspaceId', 'path', 'limit']);
    expect(history.responses['200'].content['application/json'].schema.properties.revisions.items.properties.change.enum).toEqual(['added', 'changed', 'deleted']);
    const restore = doc.paths['/v1/workspaces/{workspaceId}/files/{path}/restore'].post;
    expect(restore.requestBody.content['application/json'].schema.required).toEqual(['revision']);
    expect(Object.keys(restore.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '413', '415', '500', '501', '502', '503', '504', '507']);
    expect(doc.paths['/v1/gc'].post.requestBody.content['application/json'].schema.properties.kind.enum).toEqual(['unattached', 'retention', 'litter', 'objects', 'bases', 'orphans', 'idle', 'verify']);
  });
});

describe('/healthz and /readyz', () => {
  it('/readyz is the process\'s own readiness: 200 with no worker alive (reported), 200 with one; an unwritable archive fails it', async () => {
    const h = await createWebHarness();
    expect(await answer(h.request('/healthz'))).toMatchObject({ status: 200, body: { status: 'ok' } });
    const before = await answer(h.request('/readyz'));
    expect(before).toMatchObject({ status: 200, body: { ready: true, checks: { redis: { ok: true }, workers: { ok: false, detail: '0 live worker process(es)' }, archive: { ok: true } } } });

    await testWorkers(h.config, ['gc']);
    const after = await answer(h.request('/readyz'));
    expect(after).toMatchObject({ status: 200, body: { ready: true, checks: { redis: { ok: true }, workers: { ok: true }, archive: { ok: true } } } });

    if (process.getuid?.() !== 0) {
      // Root ignores permission bits; the check is covered for other users.
      await chmod(h.config.paths.archiveRoot, 0o500);
      const readOnly = await answer(h.request('/readyz'));
      await chmod(h.config.paths.archiveRoot, 0o700);
      expect(readOnly).toMatchObject({ status: 503, body: { checks: { archive: { ok: false } } } });
    }
  });

  it('/readyz reports an archive root that cannot be created', async () => {
    const h = await createWebHarness({ FLEET_ARCHIVE_ROOT: '/dev/null/archive' });
    await testWorkers(h.config, ['gc']);
    const answerBody = await answer(h.request('/readyz'));
    expect(answerBody).toMatchObject({ status: 503, body: { ready: false, checks: { redis: { ok: true }, workers: { ok: true }, archive: { ok: false } } } });
    expect(answerBody.body.checks.archive.detail).toContain('/dev/null/archive');
  });
});
