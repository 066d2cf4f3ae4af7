import { randomUUID } from 'node:crypto';
import type { Sandbox } from '@vercel/sandbox';
import { DEFAULT_OUTPUT_LIMIT, outputCollector } from '../../lib/output-collector.js';
import { ProviderPermanentError } from '../provider-errors.js';
import type { ExecRequest, ExecResult } from '../sandbox-provider.js';
import { FLEET_DIR, SANDBOX_HOME, TREE_DIR, sandboxPath, treePath, treeRelativePath } from './vercel-paths.js';

/**
 * Runs a command with its stdin from a file (the SDK's runCommand has no stdin): the shell opens
 * the file as its stdin, removes it, changes into the tree directory and becomes the command.
 * `$1` is the file and `$2` the directory, both relative to SANDBOX_HOME (the shell's cwd), so
 * they mean the same in a real sandbox and in the loopback stand-in.
 */
export const STDIN_WRAPPER = 'exec <"$1" || exit 126; rm -f -- "$1"; cd -- "$2" || exit 126; shift 2; exec "$@"';

/**
 * The sandbox kills a command this long after its own deadline: the fleet kills it at the
 * deadline itself; the sandbox's limit is only the backstop for a command whose caller vanished
 * before it could.
 */
export const SERVER_KILL_GRACE_MS = 5_000;
/** Time given to the request that starts a command, and to the one that kills it. */
const KILL_REQUEST_MS = 10_000;
/** What the caller's deadline adds to the command's own: the kill at its deadline and the wait for its exit. */
export const EXEC_DEADLINE_SLACK_MS = KILL_REQUEST_MS + SERVER_KILL_GRACE_MS;

/**
 * Runs `request.cmd` in the tree as a detached command: its output is read from the command's
 * log stream as it arrives (to `onStdout` / `onStderr`; the first MiB of each stream is kept for
 * the result) and its exit from a wait. At `timeoutMs` the command is killed and the result says
 * `timedOut`, as a local command's does; whatever else ends this call first (the caller's
 * signal, the provider's deadline) kills it too, so no command outlives the call that started it.
 * A non-zero exit is a result.
 */
export async function execInSandbox(sandbox: Sandbox, request: ExecRequest, signal: AbortSignal): Promise<ExecResult> {
  const [cmd, ...args] = request.cmd;
  if (cmd === undefined || cmd === '') throw new ProviderPermanentError('vercel', 'exec', 'empty command');
  const cwd = treeRelativePath(request.cwd ?? '');
  if (cwd === null) throw new ProviderPermanentError('vercel', 'exec', 'cwd must stay inside the tree', { context: { cwd: request.cwd } });
  const started = Date.now();
  let run = { cmd, args, cwd: treePath(cwd) };
  if (request.stdin !== undefined) {
    const input = `${FLEET_DIR}/stdin-${randomUUID()}`;
    await sandbox.writeFiles([{ path: sandboxPath(input), content: Buffer.from(request.stdin), mode: 0o600 }], { signal });
    run = { cmd: 'sh', args: ['-c', STDIN_WRAPPER, 'sh', input, cwd === '' ? TREE_DIR : `${TREE_DIR}/${cwd}`, cmd, ...args], cwd: SANDBOX_HOME };
  }
  // The start request is not cut by the caller: a command the sandbox started must be known here to be killed.
  const command = await sandbox.runCommand({ ...run, env: { ...(request.env ?? {}) }, detached: true, timeoutMs: request.timeoutMs + SERVER_KILL_GRACE_MS, signal: AbortSignal.timeout(KILL_REQUEST_MS) });
  let timedOut = false;
  const kill = () => void command.kill('SIGKILL', { abortSignal: AbortSignal.timeout(KILL_REQUEST_MS) }).catch(() => undefined);
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, request.timeoutMs);
  if (signal.aborted) kill();
  else signal.addEventListener('abort', kill, { once: true });
  try {
    signal.throwIfAborted();
    const stdout = outputCollector(DEFAULT_OUTPUT_LIMIT, request.onStdout);
    const stderr = outputCollector(DEFAULT_OUTPUT_LIMIT, request.onStderr);
    for await (const line of command.logs({ signal })) (line.stream === 'stderr' ? stderr : stdout).push(Buffer.from(line.data));
    const finished = await command.wait({ signal });
    return {
      exitCode: finished.exitCode,
      signal: timedOut ? 'SIGKILL' : null,
      stdout: stdout.text(),
      stderr: stderr.text(),
      timedOut,
      durationMs: finished.durationMs ?? Date.now() - started,
    };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', kill);
  }
}
