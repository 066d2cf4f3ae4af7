/**
 * The fleet under test as real processes: the Procfile's process types per host, each a
 * `node bin/fleet.js worker --queues <q>` child in its own process group, restartable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface FleetProcessSpec {
  readonly name: string;
  readonly hostId: string;
  readonly queues: string;
  /** Extra `fleet worker` arguments (e.g. `--host vercel`). */
  readonly args?: readonly string[];
  readonly env: Record<string, string>;
}

export class ManagedProcess {
  child: ChildProcess | null = null;
  stopped = false;
  restarts = 0;
  constructor(readonly spec: FleetProcessSpec) {}

  /** Starts the process and resolves once it serves its queues (or rejects when it exits first). */
  start(): Promise<void> {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'fleet.js'), 'worker', '--queues', this.spec.queues, ...(this.spec.args ?? [])], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...this.spec.env },
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    });
    this.child = child;
    this.stopped = false;
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('serving')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`${this.spec.name} exited during start (${code})`)));
    });
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  signal(signal: NodeJS.Signals): void {
    if (!this.child?.pid || !this.alive) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // gone
    }
    if (signal === 'SIGSTOP') this.stopped = true;
    if (signal === 'SIGCONT') this.stopped = false;
  }

  /** Kills the process group and waits for the exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (this.stopped) this.signal('SIGCONT');
    this.signal(signal);
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  }

  async restart(): Promise<void> {
    await this.kill('SIGKILL');
    this.restarts += 1;
    await this.start();
  }
}
