// Tracing in one process with the SDK's in-memory exporter: an HTTP request that continues a
// caller's W3C trace, the jobs it enqueues (BullMQ's add and process spans, context carried in the
// job), the provider calls they make and the rsync runs under them, all one trace, each span a
// descendant of the request's. Off (no endpoint), nothing is started.
import { trace, context, propagation } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startTracing, type Tracing } from '../../src/observability/start-tracing.js';
import { maybeStartTracing } from '../../src/observability/maybe-start-tracing.js';
import { testWorkers } from '../helpers/fleet-harness.js';
import { waitFor } from '../helpers/wait.js';
import { answer, createWebHarness } from '../helpers/web-harness.js';

let tracing: Tracing | null = null;
afterEach(async () => {
  await tracing?.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

// The chain of span names from `span` up to the root, by parent ids.
function ancestry(span: ReadableSpan, byId: Map<string, ReadableSpan>): string[] {
  const names: string[] = [];
  for (let s: ReadableSpan | undefined = span; s; s = s.parentSpanContext ? byId.get(s.parentSpanContext.spanId) : undefined) names.push(s.name);
  return names;
}

describe('tracing', () => {
  it('is off without FLEET_OTEL_ENDPOINT', async () => {
    expect(await maybeStartTracing(loadConfig({}))).toBeNull();
  });

  it('puts the request, its jobs, their provider calls and rsync runs in the caller’s trace', { timeout: 120_000 }, async () => {
    const exporter = new InMemorySpanExporter();
    tracing = startTracing(loadConfig({ FLEET_OTEL_SERVICE_NAME: 'fleet-test' }), exporter);
    // A format 1 revision is restored with rsync, so the restoring provision has an rsync run under it.
    const h = await createWebHarness({ FLEET_ARCHIVE_FORMAT: '1' });
    await testWorkers(h.config, ['provision', 'persist']);

    const headers = { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, 'x-request-id': 'trace-test-1' };
    expect((await answer(h.request('/v1/workspaces/ws-t/provision?wait=true', { json: {}, headers }))).status).toBe(200);
    await h.write('ws-t', { 'a.txt': 'traced' });
    expect((await answer(h.request('/v1/workspaces/ws-t/persist?wait=true', { json: { generation: 1, reason: 'turn-end', delete: true }, headers }))).status).toBe(200);
    // Restored from the archive after the sandbox went: the provision's restore runs rsync.
    const address = (await h.services.addresses.get('ws-t'))!;
    await h.services.providerFor(address).destroy(address.handle, AbortSignal.timeout(30_000));
    expect((await answer(h.request('/v1/workspaces/ws-t/provision?wait=true', { json: {}, headers }))).status).toBe(200);

    // A job's process span can end a moment after its request has answered (the request hears the
    // job complete before the worker closes the span), so wait until every span of the caller's
    // trace has its parent among the finished ones.
    const spans = await waitFor('the spans of the three requests, each with its parent finished', () => {
      const finished = exporter.getFinishedSpans();
      if (finished.filter((s) => s.name.startsWith('POST /v1/')).length < 3) return undefined;
      const ids = new Set(finished.map((s) => s.spanContext().spanId));
      const orphan = finished.find((s) => s.spanContext().traceId === CALLER_TRACE && s.parentSpanContext && s.parentSpanContext.spanId !== CALLER_SPAN && !ids.has(s.parentSpanContext.spanId));
      return orphan ? undefined : finished;
    });
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const server = spans.filter((s) => s.name.startsWith('POST /v1/'));
    expect(server.map((s) => s.name)).toEqual(['POST /v1/workspaces/:workspaceId/provision', 'POST /v1/workspaces/:workspaceId/persist', 'POST /v1/workspaces/:workspaceId/provision']);
    for (const s of server) {
      expect(s.spanContext().traceId).toBe(CALLER_TRACE);
      expect(s.parentSpanContext?.spanId).toBe(CALLER_SPAN);
      expect(s.attributes).toMatchObject({ 'http.route': expect.stringMatching(/^\/v1\//), 'http.response.status_code': 200, 'fleet.request_id': 'trace-test-1' });
    }
    // Every job span is in the caller's trace and hangs off one of its requests.
    const ours = spans.filter((s) => s.spanContext().traceId === CALLER_TRACE);
    for (const s of spans.filter((x) => /^(add|process) /.test(x.name))) expect(s.spanContext().traceId, s.name).toBe(CALLER_TRACE);
    const chains = ours.map((s) => ancestry(s, byId).join(' < '));
    const shown = chains.join('\n');
    for (const chain of chains) expect(chain).toMatch(/ < POST \/v1\/workspaces\/:workspaceId\/(provision|persist)$|^POST /);
    // request → BullMQ add → job run → provider call → rsync; the persist's job through its transaction.
    expect(chains, shown).toContain('provider create < process provision < add provision.provision < POST /v1/workspaces/:workspaceId/provision');
    expect(chains, shown).toContain('rsync restore < provider importTree < process provision < add provision.provision < POST /v1/workspaces/:workspaceId/provision');
    expect(chains, shown).toContain('provider openTree < process persist@local < add persist@local.persist < POST /v1/workspaces/:workspaceId/persist');
    expect(spans[0]!.resource.attributes['service.name']).toBe('fleet-test');
  });
});
