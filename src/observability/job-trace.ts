/**
 * What ties a job to the request that caused it: the HTTP request id, carried in the job's data as
 * `_trace: { requestId }` next to the payload. The worker takes `_trace` off before the payload
 * schema sees it and binds the id to every log line of the job (`reqId`), so one grep finds the
 * access-log line of a request and every line of the jobs it enqueued. Producers in other
 * languages may set it too; a value that is not a plain id is ignored, never trusted.
 */
import { randomUUID } from 'node:crypto';

export const TRACE_FIELD = '_trace';

/** A request id: letters, digits and `._:-`, at most 128 characters (what a proxy's X-Request-Id holds). */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id a client sent (`X-Request-Id`) when it is a plain id, else a new UUID. */
export function requestIdFrom(header: string | undefined): string {
  return header !== undefined && REQUEST_ID.test(header) ? header : randomUUID();
}

/** `data` with the request id attached (unchanged without one). */
export function withTrace<T extends object>(data: T, requestId: string | undefined): T {
  if (requestId === undefined || !REQUEST_ID.test(requestId)) return data;
  return { ...data, [TRACE_FIELD]: { requestId } };
}

/** Splits stored job data into the payload (without `_trace`) and the request id it carried (validated again). */
export function splitTrace(data: unknown): { payload: unknown; requestId: string | null } {
  if (data === null || typeof data !== 'object' || Array.isArray(data) || !(TRACE_FIELD in data)) return { payload: data, requestId: null };
  const { [TRACE_FIELD]: trace, ...payload } = data as Record<string, unknown>;
  const requestId = (trace as { requestId?: unknown } | null)?.requestId;
  return { payload, requestId: typeof requestId === 'string' && REQUEST_ID.test(requestId) ? requestId : null };
}
