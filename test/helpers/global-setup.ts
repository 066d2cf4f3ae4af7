// Starts one private redis-server for the whole run on a free loopback port and stops it after.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort, newRedisPassword, waitForPing } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let child: ChildProcess | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  dir = await mkdtemp(path.join(tmpdir(), 'fleet-test-redis-'));
  const port = await freePort();
  const password = newRedisPassword();
  child = spawn('redis-server', ['--requirepass', password, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction', '--maxclients', '10000'], {
    stdio: 'ignore',
  });
  const url = `redis://:${password}@127.0.0.1:${port}`;
  await waitForPing(url, 15_000);
  project.provide('redisUrl', url);
}

export async function teardown(): Promise<void> {
  child?.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
}
