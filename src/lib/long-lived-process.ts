/**
 * A child that must outlive the call that starts it (the embedded redis-server of `fleet up`).
 * runCommand awaits its command's exit, so this is the fleet's one other way to spawn. The child
 * runs detached in its own process group (a Ctrl-C aimed at the parent does not reach it) and
 * unref'd (a parent killed hard leaves it running, for the next one to adopt); it is stopped with
 * the same SIGTERM → SIGKILL discipline as every command (terminate-process.ts).
 */
import { spawn } from 'node:child_process';
import { terminateProcess } from './terminate-process.js';

/** What is kept of the child's stderr: enough for a start-up error, bounded for a child that lives long. */
const MAX_STDERR_BYTES = 64 * 1024;

export interface LongLivedProcess {
  /** Undefined when the process could not be started. */
  readonly pid: number | undefined;
  /** Settles with the exit code once the process has exited (null: ended by a signal). */
  readonly exited: Promise<number | null>;
  /** Settles with the error when the process could not be started. */
  readonly failed: Promise<Error>;
  /** What it wrote to stderr so far (the first 64 KiB). */
  stderr(): string;
  /** SIGTERM, then SIGKILL when it is still there after `graceMs`; nothing when it is already gone. */
  stop(graceMs: number): Promise<void>;
}

/** Starts `file args` with exactly `env`, stdin and stdout closed. */
export function startLongLivedProcess(file: string, args: readonly string[], { env }: { env: Readonly<Record<string, string>> }): LongLivedProcess {
  const child = spawn(file, [...args], { env: { ...env }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  child.unref();
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const failed = new Promise<Error>((resolve) => child.once('error', resolve));
  return {
    pid: child.pid,
    exited,
    failed,
    stderr: () => stderr,
    async stop(graceMs) {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      await terminateProcess(child.pid, { graceMs, exited });
    },
  };
}
