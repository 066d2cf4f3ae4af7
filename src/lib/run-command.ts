/**
 * Every bounded subprocess of the fleet runs through here: detached in its own process group,
 * with a deadline and an `AbortSignal`; on either, the whole group is SIGTERMed, then SIGKILLed
 * after a grace (terminate-process.ts; rsync forks children that a plain `child.kill()` would
 * leave behind). A non-zero exit is a result, not an error, and so is a child that could not be
 * started (`exitCode` and `signal` both null).
 *
 * Node's own `spawn`, not execa: the fleet used none of execa's conveniences, and loading it cost
 * 110-180 ms of CPU in every process that can run a command (BENCHMARKS.md, run AJ).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { DEFAULT_OUTPUT_LIMIT, outputCollector } from './output-collector.js';
import { DEFAULT_KILL_GRACE_MS, signalProcess, terminateProcess } from './terminate-process.js';

export interface RunCommandOptions {
  readonly cwd?: string;
  /** Exact environment (nothing is inherited). */
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL once the deadline or the signal fired. @default DEFAULT_KILL_GRACE_MS (5 s) */
  readonly killGraceMs?: number;
  /** Keep at most this many bytes of each output stream. @default 1 MiB */
  readonly maxOutputBytes?: number;
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
  /** Data written to stdin. */
  readonly input?: string | Buffer;
  /** A stream piped into stdin (instead of `input`); a child that stops reading early is not an error here (its exit says). */
  readonly stdin?: Readable;
  /**
   * Called each time the child's stdin has handed everything piped into it so far to the kernel
   * (its `drain`, or a write the kernel took whole at once): no chunk the pipe wrote before is
   * still read from.
   */
  readonly onStdinDrained?: () => void;
  /** Open descriptors of this process the child gets as its fds 3, 4, ... */
  readonly fds?: readonly number[];
  /** Runs the child as this uid and gid, without supplementary groups (the caller is root). */
  readonly runAs?: { readonly uid: number; readonly gid: number };
}

export interface CommandResult {
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly durationMs: number;
}

/** Runs `file args` and resolves with its result once the whole process group is gone. */
export async function runCommand(file: string, args: readonly string[], options: RunCommandOptions): Promise<CommandResult> {
  const started = Date.now();
  const limit = options.maxOutputBytes ?? DEFAULT_OUTPUT_LIMIT;
  const out = outputCollector(limit, options.onStdout);
  const err = outputCollector(limit, options.onStderr);
  const command = [file, ...args].join(' ');
  let child: ChildProcess;
  try {
    child = spawnChild(file, args, options);
  } catch {
    // Refused before it ran (an id it may not take, say): a result like a child that could not start.
    return { command, exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, aborted: false, durationMs: Date.now() - started };
  }
  // The child's end: its exit and its output streams closed; a spawn that failed ends here too.
  const ended = new Promise<{ readonly exitCode: number | null; readonly signal: string | null }>((resolve) => {
    child.once('close', (exitCode: number | null, signal: NodeJS.Signals | null) => resolve({ exitCode, signal }));
    child.on('error', () => {
      // After a start, an error (a kill that failed) is followed by `close`; without one, it is the end.
      if (child.pid === undefined) resolve({ exitCode: null, signal: null });
    });
  });
  // A child that exits without reading its stdin breaks the pipe: its exit says what happened.
  child.stdin?.on('error', () => undefined);
  if (options.input !== undefined) child.stdin?.end(options.input);
  if (options.stdin && child.stdin) {
    const stdin = child.stdin;
    options.stdin.pipe(stdin);
    const drained = options.onStdinDrained;
    if (drained) {
      // A drain follows only a write the kernel did not take at once. One it took whole, with
      // nothing queued before it, emits none: it is told after the pipe's write (this listener
      // comes after the pipe's; a `data` listener never resumes a stream the pipe paused).
      stdin.on('drain', drained);
      options.stdin.on('data', () => {
        if (stdin.writableLength === 0) drained();
      });
    }
  }
  child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));

  let timedOut = false;
  let aborted = false;
  // The child's exit, whatever its outcome.
  const exited = ended.then(() => undefined);
  let termination: Promise<unknown> | null = null;
  const terminate = () => {
    if (child.pid === undefined) return;
    termination ??= terminateProcess(-child.pid, { graceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, exited });
  };
  const timer = setTimeout(() => {
    timedOut = true;
    terminate();
  }, options.timeoutMs);
  timer.unref();
  const onAbort = () => {
    aborted = true;
    terminate();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    const result = await ended;
    return {
      command,
      exitCode: result.exitCode,
      signal: result.signal,
      stdout: out.text(),
      stderr: err.text(),
      timedOut,
      aborted,
      durationMs: Date.now() - started,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    // Settles with the child's exit (its grace timer cleared).
    await termination;
    // Grandchildren that outlived their parent (detached group) are killed too.
    if (child.pid !== undefined) signalProcess(-child.pid, 'SIGKILL');
  }
}

function spawnChild(file: string, args: readonly string[], options: RunCommandOptions): ChildProcess {
  return spawn(file, [...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    // Exactly this environment: nothing of the fleet's is inherited.
    env: { ...options.env },
    // Its own process group, killed whole (rsync's children too).
    detached: true,
    // A parent fd given as a number is shared as the child's fd 3, 4, ...
    stdio: [options.input === undefined && options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(options.fds ?? [])],
    // The child switches ids before exec (libuv drops supplementary groups too).
    ...(options.runAs ? { uid: options.runAs.uid, gid: options.runAs.gid } : {}),
  });
}
