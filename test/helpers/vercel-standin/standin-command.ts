// A command really running on the host (cwd = the sandbox's directory), with its log lines kept
// for the NDJSON streams and the exit code reported the way a shell would (128 + signal).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { newId } from './standin-state.js';

export interface LogLine {
  readonly stream: 'stdout' | 'stderr';
  readonly data: string;
}

export interface StandinCommand {
  readonly id: string;
  readonly name: string;
  readonly args: readonly string[];
  /** The sandbox-side cwd (as reported to the SDK). */
  readonly cwd: string;
  readonly sessionId: string;
  readonly startedAt: number;
  exitCode: number | null;
  durationMs?: number;
  /** Set when the session stopped under the command (its streams then end with an error line). */
  interruptedBy?: string;
  readonly logs: LogLine[];
  /** Called with each new line, then with `null` at exit. */
  readonly listeners: Set<(line: LogLine | null) => void>;
  readonly done: Promise<void>;
  kill(signal: number | NodeJS.Signals): void;
}

export interface StartCommand {
  readonly sessionId: string;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly hostCwd: string;
  readonly env: Record<string, string>;
  /** Server-side limit; SIGKILL when it passes. */
  readonly timeoutMs?: number;
}

export function commandJson(command: StandinCommand): Record<string, unknown> {
  return {
    id: command.id,
    name: command.name,
    args: command.args,
    cwd: command.cwd,
    sessionId: command.sessionId,
    exitCode: command.exitCode,
    startedAt: command.startedAt,
    durationMs: command.durationMs,
  };
}

export function startCommand(request: StartCommand): StandinCommand {
  const listeners = new Set<(line: LogLine | null) => void>();
  const logs: LogLine[] = [];
  const emit = (line: LogLine) => {
    logs.push(line);
    for (const listener of listeners) listener(line);
  };
  const child = spawn(request.cmd, [...request.args], {
    cwd: request.hostCwd,
    env: request.env,
    // Own process group, so kill() reaches the whole pipeline (`sh -c 'a | b'`).
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const command: StandinCommand = {
    id: newId('cmd'),
    name: request.cmd,
    args: request.args,
    cwd: request.cwd,
    sessionId: request.sessionId,
    startedAt: Date.now(),
    exitCode: null,
    logs,
    listeners,
    done,
    kill(signal) {
      if (child.pid === undefined || command.exitCode !== null) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    },
  };
  for (const stream of ['stdout', 'stderr'] as const) {
    const decoder = new StringDecoder('utf8');
    child[stream].on('data', (chunk: Buffer) => {
      const data = decoder.write(chunk);
      if (data !== '') emit({ stream, data });
    });
    child[stream].on('end', () => {
      const rest = decoder.end();
      if (rest !== '') emit({ stream, data: rest });
    });
  }
  const timer = request.timeoutMs === undefined ? undefined : setTimeout(() => command.kill('SIGKILL'), request.timeoutMs);
  const finish = (exitCode: number) => {
    if (command.exitCode !== null) return;
    clearTimeout(timer);
    command.exitCode = exitCode;
    command.durationMs = Date.now() - command.startedAt;
    for (const listener of listeners) listener(null);
    resolveDone();
  };
  child.on('error', (error: NodeJS.ErrnoException) => {
    emit({ stream: 'stderr', data: `${request.cmd}: ${error.code === 'ENOENT' ? 'command not found' : error.message}\n` });
    finish(error.code === 'ENOENT' ? 127 : 126);
  });
  child.on('close', (code, signal) => finish(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  return command;
}
