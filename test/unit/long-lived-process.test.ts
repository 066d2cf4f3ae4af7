// The children that outlive a call (the embedded redis-server) are stopped like every command:
// SIGTERM, then SIGKILL after the grace. Waits are on the child's exit or its own output.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startLongLivedProcess, type LongLivedProcess } from '../../src/lib/long-lived-process.js';
import { signalProcess, terminateProcess } from '../../src/lib/terminate-process.js';
import { ROOT } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const IGNORE_SIGTERM = path.join(ROOT, 'test/fixtures/ignore-sigterm.mjs');
const started: LongLivedProcess[] = [];

// Starts the fixture and waits until its SIGTERM handler is in place.
async function startIgnoringSigterm(): Promise<LongLivedProcess> {
  const child = startLongLivedProcess(process.execPath, [IGNORE_SIGTERM], { env: {} });
  started.push(child);
  await waitFor('the fixture to ignore SIGTERM', () => child.stderr().includes('ready\n') || undefined);
  return child;
}

afterEach(() => {
  for (const child of started.splice(0)) if (child.pid !== undefined) signalProcess(child.pid, 'SIGKILL');
});

describe('long-lived processes', () => {
  it('stop() SIGKILLs a child that ignores SIGTERM once the grace has passed', async () => {
    const child = await startIgnoringSigterm();
    await child.stop(300);
    // Null: ended by a signal, and not by the SIGTERM it handled.
    expect(await child.exited).toBeNull();
    expect(child.stderr()).toBe('ready\nsigterm ignored\n');
  });

  it('stop() of a child that exits on SIGTERM returns once it is gone; a second stop is a no-op', async () => {
    const child = startLongLivedProcess('sleep', ['60'], { env: { PATH: '/usr/bin:/bin' } });
    started.push(child);
    await child.stop(60_000);
    expect(await child.exited).toBeNull();
    // A second stop of a process already gone is a no-op.
    await child.stop(60_000);
  });

  it('terminateProcess polls a process it has no exit event for (an adopted server) and SIGKILLs it after the grace', async () => {
    const child = await startIgnoringSigterm();
    expect(await terminateProcess(child.pid!, { graceMs: 300 })).toBe('killed');
    expect(await child.exited).toBeNull();
    expect(child.stderr()).toContain('sigterm ignored\n');
  });

  it('terminateProcess reports a process that exits on SIGTERM within the grace as exited', async () => {
    const child = startLongLivedProcess('sleep', ['60'], { env: { PATH: '/usr/bin:/bin' } });
    started.push(child);
    expect(await terminateProcess(child.pid!, { graceMs: 60_000 })).toBe('exited');
    expect(await child.exited).toBeNull();
  });
});
