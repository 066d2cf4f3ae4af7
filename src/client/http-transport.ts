/**
 * How the HTTP client talks to a fleet's web process: one request with the bearer token and a
 * deadline, the error answer `{ error: { code, message, retryable, field?, name? } }` turned back
 * into the fleet's own error class (`instanceof StaleGenerationError` holds), and a streamed
 * answer split into lines (NDJSON) or SSE messages.
 */
import { ApiError } from '../errors/api-error.js';
import type { FleetError } from '../errors/fleet-error.js';
import { reviveFailure } from '../errors/revive-failure.js';
import { FAILURE_CODE } from '../errors/failure-wire.js';
import { anySignal } from '../lib/any-signal.js';

export interface HttpTransportOptions {
  /** The web process, e.g. `http://127.0.0.1:7400`. */
  readonly url: string;
  /** A token of FLEET_API_TOKENS (omit for an open fleet on loopback). */
  readonly token?: string;
  /** Deadline of one request that is not a stream. @default 120000 */
  readonly timeoutMs?: number;
  /** The fetch to use. @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly json?: unknown;
  readonly bytes?: Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
  /** Ends the request (a stream: when the caller stops reading). */
  readonly signal?: AbortSignal;
  /** A stream has no deadline of its own (its caller's signal ends it). */
  readonly stream?: boolean;
}

/** The error an error answer describes, as the fleet's own class where this package has it. */
export async function errorOf(response: Response): Promise<FleetError> {
  const text = await response.text().catch(() => '');
  let body: { error?: { code?: unknown; message?: unknown; retryable?: unknown; field?: unknown; name?: unknown } } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return new ApiError(response.status, 'HttpError', `HTTP ${response.status}: ${text.slice(0, 500)}`);
  }
  const error = body.error ?? {};
  const code = typeof error.code === 'string' && FAILURE_CODE.test(error.code) ? error.code : 'HttpError';
  const message = typeof error.message === 'string' ? error.message : `HTTP ${response.status}`;
  const field = typeof error.field === 'string' ? error.field : undefined;
  const wire = {
    code,
    message,
    retryable: error.retryable === true,
    ...(typeof error.name === 'string' ? { name: error.name } : {}),
    // What a PayloadInvalidError's `field` reads.
    context: field === undefined ? {} : { issues: [{ field, message }] },
  };
  return reviveFailure(wire, undefined, response.status);
}

export class HttpTransport {
  readonly #fetch: typeof fetch;

  constructor(private readonly options: HttpTransportOptions) {
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  /** Sends a request; an error answer throws its error. */
  async send(request: HttpRequest): Promise<Response> {
    const url = new URL(request.path, this.options.url);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { ...(request.headers ?? {}) };
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    let body: string | Uint8Array | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.bytes !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      body = request.bytes;
    }
    const deadline = request.stream ? undefined : AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
    const signals = [request.signal, deadline].filter((s): s is AbortSignal => s !== undefined);
    const response = await this.#fetch(url, { method: request.method, headers, ...(body === undefined ? {} : { body }), ...(signals.length > 0 ? { signal: anySignal(signals) } : {}) });
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  /** A JSON answer. */
  async json<T>(request: HttpRequest): Promise<T> {
    return (await (await this.send(request)).json()) as T;
  }
}

/** The parts of a streamed answer split at `separator` (`\n` for NDJSON, `\n\n` for SSE), as they arrive. */
export async function* splitStream(response: Response, separator: string): AsyncGenerator<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let at = buffer.indexOf(separator); at >= 0; at = buffer.indexOf(separator)) {
        const part = buffer.slice(0, at);
        buffer = buffer.slice(at + separator.length);
        if (part !== '') yield part;
      }
    }
    if (buffer.trim() !== '') yield buffer;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** The `data` of an SSE message (null for a comment or a retry hint). */
export function sseData(message: string): string | null {
  const data = message
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6));
  return data.length === 0 ? null : data.join('\n');
}
