/**
 * Every bounded subprocess of the fleet runs through here: detached in its own process group,
 * with a deadline and an `AbortSignal`; on either, the whole group is SIGTERMed, then SIGKILLed
 * after a grace (terminate-process.ts; rsync forks children that a plain `child.kill()` would
 * leave behind). A non-zero exit is a result, not an error.
 */
import type { Readable } from 'node:stream';
import { execa } from 'execa';
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
  const child = execa(file, [...args], {
    cwd: options.cwd,
    env: { ...options.env },
    extendEnv: false,
    detached: true,
    reject: false,
    // execa passes numbers on to Node's spawn (a parent fd shared as the child's fd 3+); its types only admit them for fds 0-2.
    stdio: [options.input === undefined && options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(options.fds ?? [])] as unknown as ['ignore' | 'pipe', 'pipe', 'pipe'],
    buffer: false,
    cleanup: true,
    ...(options.input === undefined ? {} : { input: options.input }),
    // Node's spawn switches ids in the child before exec (libuv drops supplementary groups too).
    ...(options.runAs ? { uid: options.runAs.uid, gid: options.runAs.gid } : {}),
  });
  if (options.stdin && child.stdin) {
    const stdin = child.stdin;
    stdin.on('error', () => undefined);
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
  // The child's exit, whatever its outcome (a spawn failure is reported by `await child`).
  const exited = child.then(() => undefined, () => undefined);
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
    const result = await child;
    return {
      command: [file, ...args].join(' '),
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
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
