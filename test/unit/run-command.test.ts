// runCommand's kill discipline on a deadline or an abort: SIGTERM to the group first, SIGKILL
// only for what is still there after the grace. Every wait is on the child's exit (the awaited
// result), never on a timer of the test.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/lib/run-command.js';
import { ROOT } from '../helpers/processes.js';

const IGNORE_SIGTERM = path.join(ROOT, 'test/fixtures/ignore-sigterm.mjs');
const SHELL_ENV = { PATH: '/usr/bin:/bin' };

// Aborts `controller` once the child has written `marker` to stdout.
function abortOn(marker: string, controller: AbortController): (chunk: Buffer) => void {
  let seen = '';
  return (chunk) => {
    seen += chunk.toString();
    if (seen.includes(marker)) controller.abort();
  };
}

describe('runCommand', () => {
  it('SIGKILLs a child that ignores SIGTERM once the grace has passed', async () => {
    const controller = new AbortController();
    const killGraceMs = 300;
    const result = await runCommand(process.execPath, [IGNORE_SIGTERM], { env: {}, timeoutMs: 60_000, signal: controller.signal, killGraceMs, onStdout: abortOn('ready\n', controller) });
    expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: 'SIGKILL' });
    // It got the SIGTERM first, and the SIGKILL only after the grace.
    expect(result.stdout).toBe('ready\nsigterm ignored\n');
    expect(result.durationMs).toBeGreaterThanOrEqual(killGraceMs);
  });

  it('SIGTERMs a child on its deadline; one that exits on it is never SIGKILLed', async () => {
    const result = await runCommand('sleep', ['60'], { env: SHELL_ENV, timeoutMs: 100, killGraceMs: 60_000 });
    expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: null, signal: 'SIGTERM' });
  });

  it('reports a normal exit as a result, with no signal', async () => {
    const result = await runCommand('sh', ['-c', 'echo out; echo err >&2; exit 3'], { env: SHELL_ENV, timeoutMs: 60_000 });
    expect(result).toMatchObject({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', timedOut: false, aborted: false });
  });
});
