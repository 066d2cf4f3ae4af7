/**
 * The serving host's side of a streamed exec (state/exec-output-store.ts): output chunks are
 * batched (at most `flushMs` old, or sooner when a batch is full), appended in order, and the end
 * entry goes last. A sink that falls behind never holds the command up: past `maxQueuedBytes`
 * waiting to be appended, chunks are dropped but still numbered, so the reader sees the gap (and
 * the host op's result still carries the first MiB of each stream). A failed append is reported
 * to `onError` and the output goes on.
 */
import { CHUNK_BYTES, type OutputChunk, type OutputStreamName } from '../state/exec-output-store.js';

export interface OutputSink {
  append(chunks: readonly OutputChunk[], firstSeq: number): Promise<void>;
  end(): Promise<void>;
}

export interface ExecOutputWriterOptions {
  /** Longest a chunk waits before it is appended. @default 50 */
  readonly flushMs?: number;
  /** Bytes waiting to be appended past which new chunks are dropped. @default 8 MiB */
  readonly maxQueuedBytes?: number;
  readonly onError?: (error: unknown) => void;
}

export interface ExecOutputWriter {
  push(stream: OutputStreamName, data: Buffer): void;
  /** Appends what is pending, then the end entry; resolves when both are in (or failed). */
  finish(): Promise<void>;
}

export function execOutputWriter(sink: OutputSink, { flushMs = 50, maxQueuedBytes = 8 * 1024 * 1024, onError = () => undefined }: ExecOutputWriterOptions = {}): ExecOutputWriter {
  let pending: OutputChunk[] = [];
  let pendingBytes = 0;
  let queuedBytes = 0;
  let nextSeq = 1;
  let pendingSeq = 1;
  let chain: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  // Hands the pending batch to the sink, after every batch before it.
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const batch = pending;
    const bytes = pendingBytes;
    const firstSeq = pendingSeq;
    pending = [];
    pendingBytes = 0;
    pendingSeq = nextSeq;
    chain = chain
      .then(() => sink.append(batch, firstSeq))
      .catch(onError)
      .finally(() => {
        queuedBytes -= bytes;
      });
  };

  return {
    push(stream, data) {
      for (let at = 0; at < data.length; at += CHUNK_BYTES) {
        const piece = data.subarray(at, at + CHUNK_BYTES);
        if (queuedBytes + piece.length > maxQueuedBytes) {
          // Dropped, but numbered: the batch restarts after the hole so the reader sees it.
          flush();
          nextSeq++;
          pendingSeq = nextSeq;
          continue;
        }
        pending.push({ stream, data: Buffer.from(piece) });
        pendingBytes += piece.length;
        queuedBytes += piece.length;
        nextSeq++;
        if (pendingBytes >= 4 * CHUNK_BYTES) flush();
      }
      if (pending.length > 0) timer ??= setTimeout(flush, flushMs);
    },
    async finish() {
      flush();
      await chain;
      await sink.end().catch(onError);
    },
  };
}
