// The Python example client (standard library only) drives the whole app-pod flow over HTTP
// against a running `fleet up`: provision, files, exec, persist, revisions, rollback, a typed error.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { testEnv } from '../helpers/fleet-env.js';
import { ROOT, startFleet } from '../helpers/processes.js';

const run = promisify(execFile);

describe('examples/python', () => {
  it('example.py runs the whole flow against fleet up and prints what it saw', { timeout: 120_000 }, async () => {
    const env = await testEnv({ FLEET_HTTP_PORT: '0' });
    const up = startFleet(['up'], env);
    await up.waitForOutput(/web\s+http:\/\/127\.0\.0\.1:\d+/, 60_000);
    const web = /web\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(up.stdout())![1]!;
    const { stdout } = await run('python3', [path.join(ROOT, 'examples', 'python', 'example.py'), web], { timeout: 100_000 });
    const seen = JSON.parse(stdout);
    // Two persists and the rollback (a checkpoint tick may add one more).
    expect(seen.revisions).toBeGreaterThanOrEqual(3);
    expect(seen).toEqual({
      generation: 1,
      exitCode: 0,
      stdout: "print('hello from python')\n",
      revisions: expect.any(Number),
      changed: true,
      read: 'v2\n',
      source: 'live',
      readOld: 'v1\n',
      tree: ['app', 'state.txt'],
      rolledBackTo: true,
      afterRollback: 'v1\n',
      stale: { status: 409, code: 'StaleGeneration', retryable: false },
      streamed: 'piped\n',
      streamedErr: 'to-err\n',
      streamExit: true,
      told: 'persisted',
      diffChanged: ['state.txt'],
      historyChanges: 'added',
      restored: 'v1\n',
      restoredFrom: true,
    });
  });
});
