import type { CommandFinished, Sandbox } from '@vercel/sandbox';
import { ProviderPermanentError } from '../provider-errors.js';
import { SANDBOX_HOME } from './vercel-paths.js';

export interface ScriptRequest {
  readonly operation: string;
  /** POSIX sh; `$1`… are `args`. Runs in `SANDBOX_HOME` and must use relative paths only. */
  readonly script: string;
  readonly args?: readonly string[];
  readonly signal: AbortSignal;
  /** Exit codes that count as success. @default [0] */
  readonly okExitCodes?: readonly number[];
}

// How much of a failed script's stderr is kept on the error.
const STDERR_TAIL = 2_000;

/**
 * Runs one of the provider's own shell scripts in the sandbox. Unlike `exec`, a failing exit code
 * is an error here: `ProviderPermanentError` with the exit code and the end of stderr (the
 * sandbox lacks a tool, a disk is full: running it again will not help).
 */
export async function runScript(sandbox: Sandbox, request: ScriptRequest): Promise<CommandFinished> {
  const result = await sandbox.runCommand({
    cmd: 'sh',
    args: ['-c', request.script, 'fleet', ...(request.args ?? [])],
    cwd: SANDBOX_HOME,
    signal: request.signal,
  });
  if (!(request.okExitCodes ?? [0]).includes(result.exitCode)) {
    const stderr = (await result.stderr()).slice(-STDERR_TAIL);
    throw new ProviderPermanentError('vercel', request.operation, `sandbox script exited with ${result.exitCode}`, {
      context: { exitCode: result.exitCode, stderr },
    });
  }
  return result;
}
