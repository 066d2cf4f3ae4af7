// Tracing through the front door, for each provider: `fleet up` with FLEET_OTEL_ENDPOINT sends
// its spans (OTLP over HTTP, JSON) to a loopback collector; an app pod's call that carries a W3C
// traceparent comes back as one trace: its request, BullMQ's add and process spans, the provider
// call, with each span's parent inside the trace.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addCleanup } from '../helpers/cleanup.js';
import { testEnv } from '../helpers/fleet-env.js';
import { killGroup, startFleet } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { providerEnv } from '../helpers/vercel-standin/standin-env.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}
interface OtlpExport {
  resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

// An OTLP/HTTP traces endpoint on loopback that keeps what it receives.
async function collector() {
  const exports: OtlpExport[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.method === 'POST') exports.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  addCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const spans = () => exports.flatMap((e) => e.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => ({ ...span, service: r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue })))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans };
}

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

describe.each(['local', 'vercel'] as const)('tracing through fleet up (%s)', (provider) => {
  it('exports one trace from the request to the provider call', { timeout: 120_000 }, async () => {
    const extra = await providerEnv(provider);
    const otlp = await collector();
    const env = await testEnv({ ...extra, FLEET_HTTP_PORT: '0', FLEET_OTEL_ENDPOINT: otlp.url, FLEET_OTEL_SERVICE_NAME: 'fleet-e2e', FLEET_GC_SCHEDULE: 'idle=off,orphans=off' });
    const up = startFleet(['up'], env);
    addCleanup(() => killGroup(up.child, 'SIGKILL'));
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;

    const answer = await fetch(`${web}/v1/workspaces/demo/provision?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` }, body: '{}' });
    expect(answer.status).toBe(200);
    // The batch goes out within its delay; SIGTERM flushes whatever is left.
    killGroup(up.child, 'SIGTERM');
    expect((await up.exited).code).toBe(0);
    const trace = await waitFor('the provision trace at the collector', () => {
      const spans = otlp.spans().filter((s) => s.traceId === CALLER_TRACE);
      return spans.some((s) => s.name === 'provider create') ? spans : undefined;
    });
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const chain = (name: string) => {
      const names: string[] = [];
      for (let s = trace.find((x) => x.name === name); s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) names.push(s.name);
      return names.join(' < ');
    };
    expect(chain('provider create')).toBe('provider create < process provision < add provision.provision < POST /v1/workspaces/:workspaceId/provision');
    expect(trace.find((s) => s.name.startsWith('POST '))!.parentSpanId).toBe(CALLER_SPAN);
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(['fleet-e2e']));
  });
});
