// Per-file setup: the leak guard. After every test, no Redis connection other than the guard's
// own may remain open on the file's test server (its worker slot's: no file beside it uses it):
// a Worker, Queue, QueueEvents or client left open fails the test that leaked it.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { testRedisUrl } from './test-redis-url.js';
import { killTrackedProcesses } from './processes.js';
import { runCleanups } from './cleanup.js';

let guard: Redis | undefined;

beforeAll(async () => {
  guard = new Redis(testRedisUrl(), { connectionName: 'leak-guard', maxRetriesPerRequest: 1 });
  await guard.ping();
});

afterAll(async () => {
  guard?.disconnect();
});

// Client names of open connections other than the guard.
async function openConnections(): Promise<string[]> {
  const list = (await guard!.client('LIST')) as string;
  return list
    .split('\n')
    .filter((line) => line.includes(' name=') && !line.includes(' name=leak-guard '))
    .map((line) => /name=(\S*)/.exec(line)?.[1] || '(unnamed)')
    .filter((name) => name !== undefined);
}

afterEach(async (context) => {
  await killTrackedProcesses();
  await runCleanups();
  const deadline = Date.now() + 3_000;
  let open = await openConnections();
  while (open.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    open = await openConnections();
  }
  if (open.length > 0 && context.task.result?.state !== 'fail') {
    // Close them so one leak does not cascade into every later test.
    await guard!.call('CLIENT', 'KILL', 'SKIPME', 'yes').catch(() => undefined);
    throw new Error(`test left ${open.length} Redis connection(s) open: ${open.join(', ')}`);
  }
  if (open.length > 0) await guard!.call('CLIENT', 'KILL', 'SKIPME', 'yes').catch(() => undefined);
});
