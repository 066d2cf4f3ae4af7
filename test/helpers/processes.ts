// Real child processes of a test (fleet CLI, fixtures), killed when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FLEET_BIN = path.join(ROOT, 'bin', 'fleet.js');

const tracked = new Set<ChildProcess>();

export interface Spawned {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or 128 + signal number style string) once the process exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stdout (or `stream`) contains `text`. */
  waitForOutput(text: string | RegExp, timeoutMs?: number, stream?: 'stdout' | 'stderr'): Promise<void>;
}

/** Spawns a process in its own process group (so rsync children die with it when killed). */
export function spawnTracked(command: string, args: readonly string[], options: { env?: Record<string, string>; cwd?: string; untracked?: boolean } = {}): Spawned {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...(options.env ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // An untracked process outlives each test (a fleet shared by a file's tests); its owner kills it.
  if (!options.untracked) tracked.add(child);
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    for (const listener of listeners) listener();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      tracked.delete(child);
      for (const listener of listeners) listener();
      resolve({ code, signal });
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForOutput(text, timeoutMs = 30_000, stream = 'stdout') {
      const matches = () => {
        const seen = stream === 'stdout' ? out : err;
        return typeof text === 'string' ? seen.includes(text) : text.test(seen);
      };
      return new Promise<void>((resolve, reject) => {
        if (matches()) return resolve();
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${String(text)} in ${stream}; stderr: ${err.slice(-2000)}`));
        }, timeoutMs);
        const check = () => {
          if (matches()) {
            clearTimeout(timer);
            listeners.delete(check);
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            listeners.delete(check);
            reject(new Error(`process exited (${child.exitCode ?? child.signalCode}) before printing ${String(text)}; stderr: ${err.slice(-2000)}`));
          }
        };
        listeners.add(check);
      });
    },
  };
}

/** Runs `fleet <args>` to completion. */
export async function runFleet(args: readonly string[], env: Record<string, string>, cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const spawned = spawnTracked(process.execPath, [FLEET_BIN, ...args], { env, ...(cwd ? { cwd } : {}) });
  const { code } = await spawned.exited;
  return { code, stdout: spawned.stdout(), stderr: spawned.stderr() };
}

/** Starts `fleet <args>` (long-running). */
export function startFleet(args: readonly string[], env: Record<string, string>, cwd?: string): Spawned {
  return spawnTracked(process.execPath, [FLEET_BIN, ...args], { env, ...(cwd ? { cwd } : {}) });
}

/** Starts `fleet <args>` for a whole test file: not killed after each test; the file kills it (afterAll). */
export function startSharedFleet(args: readonly string[], env: Record<string, string>): Spawned {
  return spawnTracked(process.execPath, [FLEET_BIN, ...args], { env, untracked: true });
}

/** Kills a tracked process group. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Kills every process a test left running (called after each test). */
export async function killTrackedProcesses(): Promise<void> {
  const children = [...tracked];
  await Promise.all(
    children.map(async (child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      if (child.signalCode === 'SIGSTOP') killGroup(child, 'SIGCONT');
      killGroup(child, 'SIGKILL');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      tracked.delete(child);
    }),
  );
}

/** The `data` of a CLI `--json` answer (`{ "ok": true, "data": … }`); throws on anything else. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function cliJson(stdout: string): any {
  const parsed = JSON.parse(stdout) as { ok?: unknown; data?: unknown };
  if (parsed.ok !== true || !('data' in parsed)) throw new Error(`expected {"ok":true,"data":…} from --json, got ${stdout.slice(0, 500)}`);
  return parsed.data;
}

/** `fleet exec <workspace> -- sh -c <script>` with `env`: its stdout; throws with stderr unless it exits 0. */
export function fleetShell(env: Record<string, string>, workspaceId: string): (script: string) => Promise<string> {
  return async (script) => {
    const result = await runFleet(['exec', workspaceId, '--', 'sh', '-c', script], env);
    if (result.code !== 0) throw new Error(`fleet exec ${workspaceId} -- sh -c ${JSON.stringify(script)} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };
}

/** `fleet <args> --json` with `env`: the answer's data; throws with stderr unless it exits 0. */
export function fleetJson(env: Record<string, string>): <T = Record<string, unknown>>(args: string[]) => Promise<T> {
  return async <T,>(args: string[]): Promise<T> => {
    const result = await runFleet([...args, '--json'], env);
    if (result.code !== 0) throw new Error(`fleet ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return cliJson(result.stdout) as T;
  };
}
