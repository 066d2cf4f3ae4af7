/**
 * Spans, when tracing is on (`FLEET_OTEL_ENDPOINT`; start-tracing.ts): the HTTP request, BullMQ's
 * own add and process spans (bullmq-otel, context carried in the job), the provider calls and the
 * rsync runs, all in one trace. Off, the OpenTelemetry API hands out non-recording spans and
 * BullMQ gets no telemetry at all, so an untraced fleet pays nothing measurable.
 *
 * The tracer provider is process-global in OpenTelemetry's design; so is BullMQ's telemetry object
 * kept here (`bullTelemetry()`), set once by `startTracing` in the long-lived processes.
 */
import { SpanStatusCode, trace, type Attributes, type Span, type SpanKind } from '@opentelemetry/api';
import type { Telemetry } from 'bullmq';
import { FLEET_VERSION } from '../version.js';

let telemetry: Telemetry | undefined;

/** The BullMQ telemetry of this process (undefined while tracing is off). */
export function bullTelemetry(): Telemetry | undefined {
  return telemetry;
}

/** Set by start-tracing.ts. */
export function setBullTelemetry(value: Telemetry | undefined): void {
  telemetry = value;
}

/** Runs `fn` inside a new active span that ends with it (an error is recorded and marks it failed). */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, kind?: SpanKind): Promise<T> {
  return trace.getTracer('sandbox-fleet', FLEET_VERSION).startActiveSpan(name, { attributes, ...(kind === undefined ? {} : { kind }) }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}
