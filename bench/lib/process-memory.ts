/**
 * Memory of a real child process: spawned in its own process group, sampled from
 * /proc/<pid>/status (VmRSS now, VmHWM = peak resident set since start), stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';

export interface Watched {
  readonly child: ChildProcess;
  /** Peak RSS (VmHWM) in MB, read now. */
  peakMB(): Promise<number>;
  /** Highest VmRSS seen by the sampler, in MB. */
  readonly sampledMaxMB: () => number;
  stop(): Promise<void>;
}

// A field of /proc/<pid>/status in MB (kB in the file).
async function statusMB(pid: number, field: 'VmHWM' | 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/** Spawns `command args`, waits until stdout contains `ready`, then samples VmRSS every `everyMs`. */
export async function spawnWatched(command: string, args: readonly string[], options: { env: Record<string, string>; cwd: string; ready: string; everyMs?: number; timeoutMs?: number }): Promise<Watched> {
  const child = spawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-4_000);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} not ready in time; stderr: ${err}`)), options.timeoutMs ?? 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(options.ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before it was ready; stderr: ${err}`));
    });
  });
  const pid = child.pid!;
  let max = 0;
  const sampler = setInterval(() => {
    statusMB(pid, 'VmRSS').then((mb) => void (max = Math.max(max, mb)), () => undefined);
  }, options.everyMs ?? 50);
  sampler.unref();
  return {
    child,
    peakMB: () => statusMB(pid, 'VmHWM'),
    sampledMaxMB: () => max,
    async stop() {
      clearInterval(sampler);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
