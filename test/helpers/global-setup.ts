// Starts the run's private redis-servers on free loopback ports and stops them after: one per
// worker slot, so files running side by side never share a server (each file's leak guard may
// count and close every connection of its own). A file uses its slot's (`testRedisUrl`).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { freePort, newRedisPassword, waitForPing } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One per worker slot (VITEST_POOL_ID 1, 2, ...). */
    redisUrls: string[];
  }
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

async function startServer(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fleet-test-redis-'));
  dirs.push(dir);
  const port = await freePort();
  const password = newRedisPassword();
  const child = spawn('redis-server', ['--requirepass', password, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction', '--maxclients', '10000'], {
    stdio: 'ignore',
  });
  children.push(child);
  const url = `redis://:${password}@127.0.0.1:${port}`;
  await waitForPing(url, 15_000);
  return url;
}

export async function setup(project: TestProject): Promise<void> {
  // maxWorkers is 1 where files do not run side by side.
  const slots = Math.max(1, project.config.maxWorkers);
  const urls: string[] = [];
  // One at a time: two servers racing for the same free port would fail the run.
  for (let slot = 0; slot < slots; slot++) urls.push(await startServer());
  project.provide('redisUrls', urls);
}

export async function teardown(): Promise<void> {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}
