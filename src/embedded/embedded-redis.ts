/**
 * Embedded mode: when `REDIS_URL` is unset, `fleet up` runs a private `redis-server` on a free
 * loopback port with AOF on and data under `<FLEET_HOME>/redis`, records its address in
 * `<FLEET_HOME>/redis.json` so every other `fleet` command run from the same directory finds
 * it, and stops it on exit. A server left running by a killed `fleet up` is adopted.
 *
 * The server requires a password generated at its first start (32 random bytes): it is written
 * to `<FLEET_HOME>/redis/redis.conf` (mode 0600, read by redis-server, never on its command line
 * where /proc/<pid>/cmdline would show it) and to `redis.json` (mode 0600) inside FLEET_HOME
 * (0700), so no sandbox uid can read it and every fleet process and CLI run as the fleet's user
 * can.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { FleetError } from '../errors/fleet-error.js';
import type { Logger } from '../logger.js';
import { delay } from '../lib/with-timeout.js';
import { freePort } from '../lib/free-port.js';
import { startLongLivedProcess } from '../lib/long-lived-process.js';
import { processAlive } from '../lib/process-alive.js';
import { terminateProcess } from '../lib/terminate-process.js';
import { redisUrlAddress } from '../redis.js';

/** Thrown when the embedded server cannot be started or found. */
export class EmbeddedRedisError extends FleetError {
  readonly code = 'EmbeddedRedis';
  readonly retryable = false;
}

export interface EmbeddedRedisState {
  /** `redis://:<password>@127.0.0.1:<port>` (a secret: the state file is 0600). */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** pid of the `fleet up` that owns the server. */
  readonly ownerPid: number;
  readonly dataDir: string;
  readonly startedAt: string;
}

export interface EmbeddedRedis {
  readonly url: string;
  readonly state: EmbeddedRedisState;
  readonly adopted: boolean;
  stop(): Promise<void>;
}

export const stateFile = (home: string) => path.join(home, 'redis.json');

/** Time the server gets between SIGTERM (it flushes the AOF) and SIGKILL. */
const STOP_GRACE_MS = 10_000;

/** Reads the recorded embedded server, if any. */
export async function readEmbeddedState(home: string): Promise<EmbeddedRedisState | null> {
  try {
    return JSON.parse(await readFile(stateFile(home), 'utf8')) as EmbeddedRedisState;
  } catch {
    return null;
  }
}

/** PINGs a URL with a short deadline. */
export async function pingRedis(url: string, timeoutMs = 1_000): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, commandTimeout: timeoutMs, retryStrategy: () => null });
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

/** The config file holding the server's password (0600). */
export const configFile = (dataDir: string) => path.join(dataDir, 'redis.conf');

/** Arguments of the private server (pure; exported for tests): its config file first. */
export function redisServerArgs(port: number, dataDir: string): string[] {
  return [
    configFile(dataDir),
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dataDir,
    '--appendonly', 'yes',
    '--appendfsync', 'everysec',
    '--save', '',
    '--maxmemory-policy', 'noeviction',
    '--protected-mode', 'yes',
    '--daemonize', 'no',
    '--logfile', path.join(dataDir, 'redis.log'),
  ];
}

/** Starts (or adopts) the embedded server for `home`. */
export async function startEmbeddedRedis({ home, logger, systemPath, startTimeoutMs = 15_000 }: { home: string; logger: Logger; systemPath: string; startTimeoutMs?: number }): Promise<EmbeddedRedis> {
  const dataDir = path.join(home, 'redis');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(home, 0o700);
  const previous = await readEmbeddedState(home);
  if (previous && (await pingRedis(previous.url))) {
    if (processAlive(previous.ownerPid) && previous.ownerPid !== process.pid) {
      throw new EmbeddedRedisError(`fleet up is already running here (pid ${previous.ownerPid}, Redis ${redisUrlAddress(previous.url)}); stop it first or use REDIS_URL=<the url in ${stateFile(home)}>`);
    }
    logger.warn({ url: previous.url, pid: previous.pid }, 'adopting embedded redis-server left running by a previous fleet up');
    const state = { ...previous, ownerPid: process.pid };
    await writeState(home, state);
    return { url: state.url, state, adopted: true, stop: () => stopByPid(home, state) };
  }

  const port = await freePort();
  const password = await serverPassword(dataDir);
  // Own process group: a Ctrl-C aimed at `fleet up` must not stop Redis before the workers drain;
  // we stop it last. If `fleet up` is SIGKILLed the server survives and the next `fleet up` adopts it.
  const server = startLongLivedProcess('redis-server', redisServerArgs(port, dataDir), { env: { PATH: systemPath } });
  const url = `redis://:${password}@127.0.0.1:${port}`;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    const early = await Promise.race([server.exited.then((code) => `exited with code ${code}`), server.failed.then((e) => e.message), delay(50).then(() => null)]);
    if (early !== null) throw new EmbeddedRedisError(`redis-server ${early}: ${server.stderr().trim() || 'see ' + path.join(dataDir, 'redis.log')}`);
    if (await pingRedis(url, 500)) break;
    if (Date.now() > deadline) {
      await server.stop(STOP_GRACE_MS);
      throw new EmbeddedRedisError(`redis-server did not answer PING within ${startTimeoutMs} ms`);
    }
  }
  const state: EmbeddedRedisState = { url, port, pid: server.pid!, ownerPid: process.pid, dataDir, startedAt: new Date().toISOString() };
  await writeState(home, state);
  let stopping: Promise<void> | null = null;
  return {
    url,
    state,
    adopted: false,
    stop() {
      stopping ??= (async () => {
        await server.stop(STOP_GRACE_MS); // redis-server flushes the AOF on SIGTERM
        await rm(stateFile(home), { force: true });
      })();
      return stopping;
    },
  };
}

// The server's password: kept in its config file across restarts (the AOF outlives a fleet up).
async function serverPassword(dataDir: string): Promise<string> {
  const existing = await readFile(configFile(dataDir), 'utf8').catch(() => null);
  const match = existing === null ? null : /^requirepass ([0-9a-f]{64})$/m.exec(existing);
  if (match) {
    await chmod(configFile(dataDir), 0o600);
    return match[1]!;
  }
  const password = randomBytes(32).toString('hex');
  const tmp = `${configFile(dataDir)}.${process.pid}.tmp`;
  await writeFile(tmp, `# written by fleet up: the embedded server's password (keep this file 0600)\nrequirepass ${password}\n`, { mode: 0o600 });
  await rename(tmp, configFile(dataDir));
  return password;
}

// Atomic write of the state file (0600: it holds the password).
async function writeState(home: string, state: EmbeddedRedisState): Promise<void> {
  const tmp = `${stateFile(home)}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(state, null, 2), { mode: 0o600 });
  await rename(tmp, stateFile(home));
}

// Stops an adopted server by pid (not our child: polled until it is gone).
async function stopByPid(home: string, state: EmbeddedRedisState): Promise<void> {
  await terminateProcess(state.pid, { graceMs: STOP_GRACE_MS });
  await rm(stateFile(home), { force: true });
}

/**
 * The Redis URL every `fleet` command uses: `REDIS_URL`, else the embedded server recorded under
 * `FLEET_HOME`. Throws with instructions when neither exists.
 */
export async function resolveRedisUrl(configuredUrl: string | null, home: string): Promise<string> {
  if (configuredUrl) return configuredUrl;
  const state = await readEmbeddedState(home);
  if (state && (await pingRedis(state.url))) return state.url;
  throw new EmbeddedRedisError(`no Redis: REDIS_URL is unset and no embedded server is running for ${home}; run \`fleet up\` here first or set REDIS_URL`);
}
