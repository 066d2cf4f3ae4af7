// Helpers to run private redis-server processes (the shared one, and ones a test restarts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** A fresh password for a test server: every Redis the fleet uses has one (config refuses a URL without it). */
export const newRedisPassword = (): string => randomBytes(16).toString('hex');

import { createServer } from 'node:net';
import { freePort as kernelFreePort } from '../../src/lib/free-port.js';

/**
 * Ports test servers take: below the kernel's ephemeral range (32768–60999 on Linux), from which
 * the suite's hundreds of outgoing connections take their source ports. A port the kernel hands
 * out for `listen(0)` comes from that range, so one of those connections could take it between
 * the check and the server's bind, or while a test restarts its server on the same port.
 */
const TEST_PORTS = { low: 20_000, high: 32_000 } as const;

// True when nothing listens on 127.0.0.1:`port` now.
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free loopback port below the ephemeral range (else one from the kernel). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = TEST_PORTS.low + Math.floor(Math.random() * (TEST_PORTS.high - TEST_PORTS.low));
    if (await bindable(port)) return port;
  }
  return kernelFreePort();
}

export async function ping(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 500, commandTimeout: 500, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export async function waitForPing(url: string, timeoutMs: number, exited: () => string | null = () => null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ping(url))) {
    const why = exited();
    if (why !== null) throw new RedisExitedError(url, why);
    if (Date.now() > deadline) throw new Error(`redis at ${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** redis-server exited before it answered (e.g. its port was taken between freePort and bind). */
export class RedisExitedError extends Error {
  constructor(
    readonly url: string,
    readonly detail: string,
  ) {
    super(`redis at ${url} exited before it answered: ${detail}`);
  }
}

/** A redis-server a test owns (e.g. to restart it with AOF). */
export class RedisServer {
  child: ChildProcess | undefined;
  #tail = '';
  constructor(
    readonly port: number,
    readonly dir: string,
    readonly aof = true,
    /** More redis-server arguments (e.g. `['--maxmemory', '2mb']`). */
    readonly extraArgs: readonly string[] = [],
    readonly password: string = newRedisPassword(),
  ) {}

  get url(): string {
    return `redis://:${this.password}@127.0.0.1:${this.port}`;
  }

  /**
   * A started server on a free port. Another process may take the port between freePort and the
   * server's bind; the server then exits at once, and it is started again on another port.
   */
  static async startOnFreePort(dir: string, aof = true, extraArgs: readonly string[] = []): Promise<RedisServer> {
    for (let attempt = 1; ; attempt++) {
      const server = new RedisServer(await freePort(), dir, aof, extraArgs);
      try {
        await server.start();
        return server;
      } catch (error) {
        await server.stop('SIGKILL');
        if (!(error instanceof RedisExitedError) || attempt === 3) throw error;
      }
    }
  }

  /** Starts the server; rejects with RedisExitedError (and its last output) if it exits before answering. */
  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--appendonly', this.aof ? 'yes' : 'no', '--appendfsync', 'always', '--save', '', '--maxmemory-policy', 'noeviction', '--requirepass', this.password, ...this.extraArgs],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    this.#tail = '';
    const keep = (chunk: Buffer) => {
      this.#tail = (this.#tail + chunk.toString('utf8')).slice(-2_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let exit: string | null = null;
    child.once('exit', (code, signal) => {
      exit = `exit ${code ?? signal}: ${this.#tail.trim().split('\n').slice(-3).join(' | ')}`;
    });
    child.once('error', (error) => {
      exit = `spawn failed: ${error.message}`;
    });
    await waitForPing(this.url, 15_000, () => exit);
  }

  /** The last lines the server printed (its log), for a test's failure message. */
  lastLog(lines = 8): string {
    return this.#tail.trim().split('\n').slice(-lines).join('\n');
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}
