import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Sandbox } from '@vercel/sandbox';
import { ProviderBusyError } from '../provider-errors.js';
import { classifyVercelError } from './classify-vercel-error.js';
import { sandboxPath } from './vercel-paths.js';

/** A file streamed back from the sandbox, counted as it crosses the SDK. */
export interface SandboxFileStream {
  readonly chunks: AsyncIterable<Buffer>;
  /** Bytes received so far. */
  bytes(): number;
}

/**
 * Streams `relative` (a path under `SANDBOX_HOME` the provider just wrote) back with the SDK's
 * file read. Errors of the transfer itself are classified as provider errors where they happen,
 * so the host-side code consuming the stream can tell them from its own filesystem's.
 */
export async function readSandboxFile(sandbox: Sandbox, relative: string, operation: string, signal: AbortSignal): Promise<SandboxFileStream> {
  const stream = await sandbox.readFile({ path: sandboxPath(relative) }, { signal });
  // Written a moment ago: a vanished file means the session was reset under us.
  if (stream === null) throw new ProviderBusyError('vercel', operation, 'a transfer file vanished before it was read', { context: { file: relative } });
  let received = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of stream as AsyncIterable<Buffer | string>) {
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        received += buffer.length;
        yield buffer;
      }
    } catch (error) {
      throw classifyVercelError(error, operation);
    }
  }
  return { chunks: counted(), bytes: () => received };
}

/**
 * The uncompressed bytes of a gzip stream, at most `maxBytes` of them (`tooLarge()` is thrown
 * beyond): what comes out of a sandbox may be a decompression bomb.
 */
export async function* gunzipBounded(source: AsyncIterable<Buffer>, maxBytes: number, tooLarge: () => Error): AsyncGenerator<Buffer> {
  const gunzip = pipeline(Readable.from(source), createGunzip(), () => undefined);
  let total = 0;
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw tooLarge();
      yield chunk;
    }
  } finally {
    gunzip.destroy();
  }
}
