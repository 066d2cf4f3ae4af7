/**
 * The two commands every persist runs, `sync -f DIR` (its durability step: Node has no
 * `syncfs`) and the change scan's `find` (archive/changed-dirs.ts), run by a few long-lived
 * shells instead of a new process per call. A process is forked whole, page tables and all:
 * from a worker of 150 MB a spawn cost 7–9 ms and 3.5–5 ms of CPU on its thread, 27 ms at
 * 600 MB, where a line to a waiting shell costs about 1 ms and 0.1 ms; the two spawns were a
 * tenth of a 10,000-file turn (BENCHMARKS.md).
 *
 * A helper is `sh` with a fixed loop: one request a line (`sync<TAB>DIR` or
 * `scan<TAB>ROOT<TAB>TIME`), nothing else runs. Its answer is what the command wrote to stdout
 * (a scan's records, `<type> <path>\0`; a sync writes none), an empty record (`\0`: no record
 * is empty), then `<status> <length>\n` and that many bytes of what it wrote to stderr.
 * - Each call still gets its own command, started after it was made (the rule a commit's
 *   `syncfs` needs), exactly as a spawn per call did.
 * - At most `MAX_HELPERS` run at once (one per persist in flight; more wait for one). An idle
 *   helper does not keep this process alive, and it exits when this process does (its stdin
 *   closes), however this process ends.
 * - Each helper runs detached in its own process group, like every command the fleet runs
 *   (run-command.ts): a Ctrl-C aimed at `fleet up` does not end a sync under way.
 * - A call's deadline or abort, or its caller stopping it, kills that helper's whole group; a
 *   helper that dies or answers out of turn fails only the call it was serving. The next call
 *   starts a new one.
 * - The arguments are the fleet's own (an archive directory; a tree's root as
 *   `/proc/<this pid>/fd/<n>`, the directory this process holds open, and a time), never bytes a
 *   sandbox chose; one a line cannot carry is refused (`carries`), and its caller runs the
 *   command the old way.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';
import { AnswerReader, type HelperAnswer } from './helper-answer.js';
import { signalProcess } from './terminate-process.js';

export type { HelperAnswer } from './helper-answer.js';

/** Where coreutils installs `stdbuf`'s library (Debian and Ubuntu, Fedora, a source build). */
const STDBUF_LIBRARIES = ['/usr/libexec/coreutils/libstdbuf.so', '/usr/lib/coreutils/libstdbuf.so', '/usr/local/libexec/coreutils/libstdbuf.so'];

/** Helpers of one pool at once: the persists a worker runs at a time, and a few more. */
export const MAX_HELPERS = 4;

/**
 * The shell's loop (fd 3 is its stdout: a scan's records go there, its stderr into `said`). A
 * scan's `find` writes each record as it finds it, so the walk can follow it
 * (archive/scan-listing.ts): coreutils' `stdbuf` library is preloaded into it, as `stdbuf -o0`
 * does, without that command's own exec (2–5 ms a scan here); where the library is not found,
 * `find` buffers as before. Its expression is archive/changed-dirs.ts `SCAN_EXPRESSION`.
 */
const HELPER_SCRIPT = `exec 3>&1
unbuffer=
for lib in ${STDBUF_LIBRARIES.join(' ')}; do
  if [ -r "$lib" ]; then unbuffer=$lib; break; fi
done
while IFS='\t' read -r verb a b; do
  case $verb in
    sync) said=$(sync -f -- "$a" 2>&1) ;;
    scan) said=$(LD_PRELOAD=$unbuffer _STDBUF_O=0 find -H "$a" \\( -newerct "$b" -printf '%y %P\\0' \\) -o \\( -type d -printf 'u %P\\0' \\) 2>&1 >&3) ;;
    *) said="unknown request"; false ;;
  esac
  status=$?
  printf '\\0%s %s\\n%s' "$status" "\${#said}" "$said"
done`;

export type HelperRequest = readonly ['sync', string] | readonly ['scan', string, string];

export interface HelperCall {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Each chunk of the command's stdout, as it comes; returning `false` stops the command (the call then rejects). */
  readonly onStdout?: (chunk: Buffer) => boolean | void;
}

/** Whether `value` can travel as an argument of a request line. */
export const carries = (value: string): boolean => !/[\t\n\0]/.test(value);

/** A call that ended before its answer: its deadline, its signal, its caller, or its helper. */
export class HelperCallFailed extends Error {
  constructor(
    message: string,
    readonly reason: 'timeout' | 'aborted' | 'stopped' | 'helper',
    /** The helper was gone before it wrote anything for this call (an idle one that died unseen): the call may be made again. */
    readonly unanswered = false,
  ) {
    super(message);
    this.name = 'HelperCallFailed';
  }
}

interface Pending {
  readonly onStdout: ((chunk: Buffer) => boolean | void) | undefined;
  readonly resolve: (answer: HelperAnswer) => void;
  readonly reject: (error: Error) => void;
}

/** One shell and the call it serves, if any. */
class Helper {
  readonly #child: ChildProcessWithoutNullStreams;
  #pending: Pending | null = null;
  /** Whether the call being served has had a byte of its answer. */
  #heard = false;
  /** The answer of the call being served, read as it comes. */
  #reader: AnswerReader | null = null;
  #gone: Error | null = null;

  constructor(env: Readonly<Record<string, string>>) {
    this.#child = spawn('sh', ['-c', HELPER_SCRIPT], { cwd: '/', env: { ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.#child.stdout.on('data', (chunk: Buffer) => this.#read(chunk));
    // The loop itself says nothing on stderr; whatever a broken shell says is dropped, and never keeps this process alive.
    this.#child.stderr.resume();
    (this.#child.stderr as unknown as Socket).unref();
    this.#child.stdin.on('error', () => undefined); // a helper gone mid-write: its exit fails the call
    this.#child.once('error', (error) => this.#end(new HelperCallFailed(`the shell helper could not start: ${error.message}`, 'helper')));
    this.#child.once('exit', (code, signal) => this.#end(new HelperCallFailed(`the shell helper exited (${signal ?? code})`, 'helper', this.#pending !== null && !this.#heard)));
    this.#idle();
  }

  get alive(): boolean {
    return this.#gone === null;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Runs one request; resolves with its status and stderr once the command has ended. */
  call(request: HelperRequest, onStdout: Pending['onStdout']): Promise<HelperAnswer> {
    if (this.#gone) return Promise.reject(this.#gone);
    this.#busy();
    return new Promise<HelperAnswer>((resolve, reject) => {
      this.#pending = { onStdout, resolve, reject };
      this.#heard = false;
      this.#reader = new AnswerReader();
      this.#child.stdin.write(`${request.join('\t')}\n`);
    });
  }

  /** Kills the helper's whole group (a command under way in it too); its call rejects with `reason`. */
  kill(reason: Error): void {
    if (this.#child.pid !== undefined) signalProcess(-this.#child.pid, 'SIGKILL');
    this.#end(reason);
  }

  #read(chunk: Buffer): void {
    const pending = this.#pending;
    if (!pending || !this.#reader) return this.kill(new HelperCallFailed('the shell helper wrote out of turn', 'helper'));
    this.#heard = true;
    let step;
    try {
      step = this.#reader.push(chunk);
    } catch (error) {
      return this.kill(new HelperCallFailed(`the shell helper's answer is malformed: ${(error as Error).message}`, 'helper'));
    }
    if (step.output.length > 0 && pending.onStdout?.(step.output) === false) return this.kill(new HelperCallFailed('stopped by its caller', 'stopped'));
    if (!step.answer) return;
    this.#pending = null;
    this.#reader = null;
    this.#idle();
    pending.resolve(step.answer);
  }

  #end(error: Error): void {
    this.#gone ??= error;
    const pending = this.#pending;
    this.#pending = null;
    pending?.reject(error);
  }

  // An idle helper does not keep the event loop (and so this process) alive; a busy one does.
  // (A child's piped stdio are sockets; Node types them as plain streams.)
  #idle(): void {
    this.#child.unref();
    (this.#child.stdout as unknown as Socket).unref();
    (this.#child.stdin as unknown as Socket).unref();
  }

  #busy(): void {
    this.#child.ref();
    (this.#child.stdout as unknown as Socket).ref();
    (this.#child.stdin as unknown as Socket).ref();
  }
}

/** The helpers of one environment (the fleet's `PATH`). */
export class ShellHelpers {
  readonly #env: Readonly<Record<string, string>>;
  readonly #max: number;
  readonly #idle: Helper[] = [];
  #running = 0;
  /** Calls waiting for a helper, in order. */
  readonly #queue: (() => void)[] = [];

  constructor(systemPath: string, max = MAX_HELPERS) {
    this.#env = Object.freeze({ PATH: systemPath, LC_ALL: 'C' });
    this.#max = max;
  }

  /** Helpers alive now (idle or serving a call). */
  get running(): number {
    return this.#running;
  }

  /** The pids of the idle helpers. */
  idlePids(): number[] {
    return this.#idle.flatMap((helper) => (helper.alive && helper.pid !== undefined ? [helper.pid] : []));
  }

  /**
   * Runs `request` in a helper; resolves with the command's status and stderr (a non-zero status
   * is an answer, not an error). Rejects with `HelperCallFailed` on the deadline, the signal, a
   * caller's stop, or a helper lost; with a `RangeError` for an argument a line cannot carry.
   */
  async call(request: HelperRequest, options: HelperCall): Promise<HelperAnswer> {
    for (const arg of request) if (!carries(arg)) throw new RangeError(`a shell helper cannot carry the argument ${JSON.stringify(arg)}`);
    // `find` would read a root starting with `-` as an option: a scan starts from an absolute path, at a time find takes.
    if (request[0] === 'scan' && (!request[1].startsWith('/') || !/^@\d+(\.\d{1,9})?$/.test(request[2]))) {
      throw new RangeError(`a scan needs an absolute root and an @<seconds> time, not ${JSON.stringify(request[1])} and ${JSON.stringify(request[2])}`);
    }
    try {
      return await this.#callOnce(request, options);
    } catch (error) {
      // An idle helper that died unseen (killed, say) took the request and never ran it: once more, on another.
      if (!(error instanceof HelperCallFailed && error.unanswered)) throw error;
      return this.#callOnce(request, options);
    }
  }

  async #callOnce(request: HelperRequest, options: HelperCall): Promise<HelperAnswer> {
    options.signal?.throwIfAborted();
    const helper = await this.#take();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => helper.kill(new HelperCallFailed(`${request[0]} was aborted`, 'aborted'));
    try {
      const answer = helper.call(request, options.onStdout);
      timer = setTimeout(() => helper.kill(new HelperCallFailed(`${request[0]} timed out after ${options.timeoutMs} ms`, 'timeout')), options.timeoutMs);
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
      return await answer;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      this.#give(helper);
    }
  }

  // An idle live helper, a new one while fewer than `max` run, else the next one given back.
  async #take(): Promise<Helper> {
    for (;;) {
      const idle = this.#idle.pop();
      if (idle?.alive) return idle;
      if (idle) {
        this.#running -= 1;
        continue;
      }
      if (this.#running < this.#max) {
        this.#running += 1;
        return new Helper(this.#env);
      }
      await new Promise<void>((resolve) => this.#queue.push(resolve));
    }
  }

  #give(helper: Helper): void {
    if (helper.alive) this.#idle.push(helper);
    else this.#running -= 1;
    this.#queue.shift()?.();
  }
}

/** The process's helpers, one pool per `PATH` they run with. */
const pools = new Map<string, ShellHelpers>();

/** The shared helpers of `systemPath`. */
export function shellHelpers(systemPath: string): ShellHelpers {
  let pool = pools.get(systemPath);
  if (!pool) pools.set(systemPath, (pool = new ShellHelpers(systemPath)));
  return pool;
}
