/**
 * Runs one command of a workspace without isolation (development, host-side tests): as the
 * fleet's user, in the live tree, with exactly the request's environment.
 */
import { runCommand } from '../../lib/run-command.js';
import type { ExecRequest, ExecResult } from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';

/** Runs `file args` with `cwd` (a handle's kernel path: the child changes into that very directory). */
export async function runUnsandboxed(file: string, args: readonly string[], cwd: string, request: ExecRequest): Promise<ExecResult> {
  const result = await runCommand(file, args, {
    cwd,
    env: { ...(request.env ?? {}) },
    timeoutMs: request.timeoutMs,
    signal: request.signal,
    ...(request.stdin === undefined ? {} : { input: request.stdin }),
    ...(request.onStdout ? { onStdout: request.onStdout } : {}),
    ...(request.onStderr ? { onStderr: request.onStderr } : {}),
  }).catch((error: unknown) => {
    // A missing executable is the command's problem, reported like a shell would (127).
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw classifyFsError(error, 'exec');
  });
  if (!result) return { exitCode: 127, signal: null, stdout: '', stderr: `${file}: command not found\n`, timedOut: false, durationMs: 0 };
  return {
    exitCode: result.exitCode,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
  };
}
