/** A private redis-server with AOF for the chaos run, restartable in place. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export class RedisProcess {
  child: ChildProcess | null = null;
  constructor(
    readonly port: number,
    readonly dir: string,
    /** Every Redis the fleet uses has a password (config refuses a URL without one). */
    readonly password: string = randomBytes(16).toString('hex'),
  ) {}

  get url(): string {
    return `redis://:${this.password}@127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--requirepass', this.password, '--bind', '127.0.0.1', '--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' });
    for (let i = 0; i < 400; i++) {
      const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      probe.on('error', () => undefined);
      const ok = await probe.connect().then(() => probe.ping()).then(() => true, () => false);
      probe.disconnect();
      if (ok) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('redis-server did not start');
  }

  /** SIGTERM (AOF flushed), then start again on the same port and data directory. */
  async restart(): Promise<void> {
    await this.stop('SIGTERM');
    await this.start();
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}
