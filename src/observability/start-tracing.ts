/**
 * Turns tracing on for a long-lived process (`fleet up`, `fleet worker`, `fleet web`) when
 * `FLEET_OTEL_ENDPOINT` is set: a Node tracer provider (async-hooks context, W3C trace-context
 * propagation) batching spans to the OTLP/HTTP endpoint, and BullMQ's telemetry (bullmq-otel) so
 * queue adds and job runs are spans whose context travels with the job. Tests pass their own
 * exporter (the SDK's in-memory one). `shutdown()` flushes what is buffered, within a deadline.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BullMQOtel } from 'bullmq-otel';
import type { Config } from '../config.js';
import { withTimeout } from '../lib/with-timeout.js';
import { FLEET_VERSION } from '../version.js';
import { setBullTelemetry } from './tracing.js';

export interface Tracing {
  shutdown(): Promise<void>;
}

const EXPORT_TIMEOUT_MS = 10_000;
const SHUTDOWN_DEADLINE_MS = 5_000;

/** Starts tracing; null when it is off (no endpoint and no exporter given). */
export function startTracing(config: Pick<Config, 'tracing'>, exporter?: SpanExporter): Tracing | null {
  const { endpoint, serviceName } = config.tracing;
  if (!endpoint && !exporter) return null;
  const processor = exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint!, timeoutMillis: EXPORT_TIMEOUT_MS }));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': FLEET_VERSION }),
    spanProcessors: [processor],
  });
  provider.register();
  setBullTelemetry(new BullMQOtel({ tracerName: serviceName, version: FLEET_VERSION }));
  return {
    async shutdown() {
      setBullTelemetry(undefined);
      await withTimeout(provider.shutdown(), SHUTDOWN_DEADLINE_MS, () => new Error('tracing shutdown took too long')).catch(() => undefined);
    },
  };
}
