/**
 * A command's run as a stream of events for `POST /exec` with `Accept: application/x-ndjson`
 * (one JSON object per line) or `text/event-stream` (SSE, the event's `type` as its name):
 * `stdout` / `stderr` chunks as they arrive (UTF-8 text; a character split between chunks is
 * kept whole), `heartbeat` while the command is quiet (so proxies keep the connection), and last
 * either `exit` (the result) or `error` (the same `{ code, message, retryable }` as an error
 * answer: the command could not be run or its sandbox failed on the way).
 */
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { PushQueue } from '../lib/push-queue.js';
import type { ExecResult } from '../providers/sandbox-provider.js';
import { errorResponse } from './error-response.js';

export const NDJSON = 'application/x-ndjson';
export const EVENT_STREAM = 'text/event-stream';

export const ExecEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stdout'), data: z.string() }),
  z.object({ type: z.literal('stderr'), data: z.string() }),
  z.object({ type: z.literal('heartbeat') }),
  z.object({
    type: z.literal('exit'),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number(),
    handle: z.string(),
    /** Output bytes left out because the client read more slowly than the command wrote. */
    droppedBytes: z.number().int(),
  }),
  z.object({ type: z.literal('error'), error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean().optional() }) }),
]);
export type ExecEvent = z.infer<typeof ExecEventSchema>;

/** Which stream format an Accept header asks for; null: the whole result as one JSON answer. */
export function streamFormat(accept: string | undefined): typeof NDJSON | typeof EVENT_STREAM | null {
  const types = (accept ?? '').split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
  if (types.includes(NDJSON)) return NDJSON;
  if (types.includes(EVENT_STREAM)) return EVENT_STREAM;
  return null;
}

/** One event in the wire format (`seq` numbers SSE events). */
export function encodeExecEvent(format: typeof NDJSON | typeof EVENT_STREAM, event: ExecEvent, seq: number): string {
  if (format === NDJSON) return `${JSON.stringify(event)}\n`;
  if (event.type === 'heartbeat') return ': heartbeat\n\n';
  return `id: ${seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export interface ExecStreamOptions {
  /** Time between heartbeats while nothing else is sent. @default 15000 */
  readonly heartbeatMs?: number;
  /** Output bytes queued for a slow client past which output is dropped (and counted). @default 16 MiB */
  readonly maxQueuedBytes?: number;
}

type Run = (sinks: { onStdout: (chunk: Buffer) => void; onStderr: (chunk: Buffer) => void }) => Promise<ExecResult & { readonly handle: string }>;

/**
 * Starts `run` and answers its events as they happen. `cancel` is called when the client goes
 * away before the end (the caller aborts the command with it).
 */
export function execEvents(run: Run, cancel: () => void, { heartbeatMs = 15_000, maxQueuedBytes = 16 * 1024 * 1024 }: ExecStreamOptions = {}): AsyncIterable<ExecEvent> {
  let queuedBytes = 0;
  let droppedBytes = 0;
  let heartbeat: NodeJS.Timeout | undefined;
  const queue = new PushQueue<ExecEvent>(() => {
    clearInterval(heartbeat);
    cancel();
  });
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  const output = (type: 'stdout' | 'stderr', text: string) => {
    if (text === '') return;
    if (queuedBytes + text.length > maxQueuedBytes) {
      droppedBytes += Buffer.byteLength(text);
      return;
    }
    queuedBytes += text.length;
    queue.push({ type, data: text });
  };
  heartbeat = setInterval(() => {
    if (queue.length === 0) queue.push({ type: 'heartbeat' });
  }, heartbeatMs);
  heartbeat.unref();
  run({ onStdout: (chunk) => output('stdout', decoders.stdout.write(chunk)), onStderr: (chunk) => output('stderr', decoders.stderr.write(chunk)) })
    .then((result) => {
      output('stdout', decoders.stdout.end());
      output('stderr', decoders.stderr.end());
      queue.push({ type: 'exit', exitCode: result.exitCode, signal: result.signal, timedOut: result.timedOut, durationMs: result.durationMs, handle: result.handle, droppedBytes });
    })
    .catch((error: unknown) => queue.push({ type: 'error', error: errorResponse(error).body.error }))
    .finally(() => {
      clearInterval(heartbeat);
      queue.end();
    });
  // Queued bytes count down as the client takes the events.
  return {
    [Symbol.asyncIterator]() {
      const inner = queue[Symbol.asyncIterator]();
      return {
        async next() {
          const next = await inner.next();
          if (!next.done && (next.value.type === 'stdout' || next.value.type === 'stderr')) queuedBytes -= next.value.data.length;
          return next;
        },
        return: () => inner.return!(),
      };
    },
  };
}
