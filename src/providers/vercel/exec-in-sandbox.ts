import { Writable } from 'node:stream';
import type { Sandbox } from '@vercel/sandbox';
import { ProviderPermanentError } from '../provider-errors.js';
import type { ExecRequest, ExecResult } from '../sandbox-provider.js';
import { treePath, treeRelativePath } from './vercel-paths.js';

/**
 * The sandbox kills a command this long after the client's deadline. The client deadline
 * (`timeoutMs`) always fires first and turns into `ProviderBusyError`; the server-side limit is
 * only the backstop that stops a command whose client went away.
 */
export const SERVER_KILL_GRACE_MS = 5_000;

/**
 * Runs `request.cmd` in the tree through the SDK's synchronous `runCommand` (an NDJSON stream):
 * output chunks reach `onStdout` / `onStderr` as they arrive. A non-zero exit is a result. The
 * deadline is the caller's (`withDeadline` with `timeoutMs`), so a command still running when
 * it fires is reported as busy, never as a result; `timedOut` and `signal` are therefore always
 * `false` / `null` here (Vercel reports neither).
 */
export async function execInSandbox(sandbox: Sandbox, request: ExecRequest, signal: AbortSignal): Promise<ExecResult> {
  const [cmd, ...args] = request.cmd;
  if (cmd === undefined || cmd === '') throw new ProviderPermanentError('vercel', 'exec', 'empty command');
  const cwd = treeRelativePath(request.cwd ?? '');
  if (cwd === null) throw new ProviderPermanentError('vercel', 'exec', 'cwd must stay inside the tree', { context: { cwd: request.cwd } });
  const started = Date.now();
  const result = await sandbox.runCommand({
    cmd,
    args,
    cwd: treePath(cwd),
    env: { ...(request.env ?? {}) },
    stdout: request.onStdout ? chunkSink(request.onStdout) : undefined,
    stderr: request.onStderr ? chunkSink(request.onStderr) : undefined,
    timeoutMs: request.timeoutMs + SERVER_KILL_GRACE_MS,
    signal,
  });
  return {
    exitCode: result.exitCode,
    signal: null,
    stdout: await result.stdout(),
    stderr: await result.stderr(),
    timedOut: false,
    durationMs: result.durationMs ?? Date.now() - started,
  };
}

// A Writable that hands every chunk the SDK writes to `onChunk` as a Buffer.
function chunkSink(onChunk: (chunk: Buffer) => void): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      onChunk(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      callback();
    },
  });
}
