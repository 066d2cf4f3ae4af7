/** Runs rsync with a deadline (process group killed on expiry) and classifies its exit. */
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { runCommand, type CommandResult } from '../lib/run-command.js';
import { RsyncError } from './rsync-error.js';
import { inSpan } from '../observability/tracing.js';

export interface RunRsyncOptions {
  readonly args: readonly string[];
  readonly operation: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** Exit codes that still count as success (e.g. 24 for upload-only). */
  readonly acceptExitCodes?: readonly number[];
  readonly path: string;
  /** Data for rsync's stdin (a `--files-from=-` list). */
  readonly input?: Buffer;
}

export interface RsyncRun {
  readonly exitCode: number;
  readonly durationMs: number;
  readonly result: CommandResult;
}

export function runRsync(options: RunRsyncOptions): Promise<RsyncRun> {
  return inSpan(`rsync ${options.operation}`, { 'fleet.rsync.operation': options.operation }, async (span) => {
    const run = await rsyncOnce(options);
    span.setAttribute('fleet.rsync.exit_code', run.exitCode);
    return run;
  });
}

async function rsyncOnce({ args, operation, timeoutMs, signal, acceptExitCodes = [], path, input }: RunRsyncOptions): Promise<RsyncRun> {
  const result = await runCommand('rsync', args, { env: { PATH: path, LC_ALL: 'C' }, timeoutMs, signal, ...(input ? { input } : {}) });
  if (result.timedOut || result.aborted) {
    throw new DeadlineExceededError(`rsync ${operation}`, timeoutMs, { cause: signal.reason });
  }
  const exitCode = result.exitCode ?? 128;
  if (exitCode !== 0 && !acceptExitCodes.includes(exitCode)) throw new RsyncError(exitCode, operation, result.stderr);
  return { exitCode, durationMs: result.durationMs, result };
}
