// runCommand's kill discipline on a deadline or an abort: SIGTERM to the group first, SIGKILL
// only for what is still there after the grace. Every wait is on the child's exit (the awaited
// result), never on a timer of the test. Also: a piped stdin says when it has drained.
import path from 'node:path';
import { PassThrough } from 'node:stream';
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

  it('says when its stdin has handed everything piped in so far to the kernel (the bytes reach the child whole)', async () => {
    const input = new PassThrough();
    const drained: number[] = [];
    let piped = 0;
    const run = runCommand('sh', ['-c', 'wc -c'], { env: SHELL_ENV, timeoutMs: 60_000, stdin: input, onStdinDrained: () => drained.push(piped) });
    // Chunks far over the stdin's high-water mark: each write has to wait for a drain.
    for (let i = 0; i < 16; i++) {
      piped += 256 * 1024;
      if (!input.write(Buffer.alloc(256 * 1024, i))) await new Promise((resolve) => input.once('drain', resolve));
    }
    input.end();
    const result = await run;
    expect(result.stdout.trim()).toBe(String(16 * 256 * 1024));
    expect(drained.length).toBeGreaterThan(0);
    expect(drained.every((bytes) => bytes > 0 && bytes <= piped)).toBe(true);
  });

  it('reports a normal exit as a result, with no signal', async () => {
    const result = await runCommand('sh', ['-c', 'echo out; echo err >&2; exit 3'], { env: SHELL_ENV, timeoutMs: 60_000 });
    expect(result).toMatchObject({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', timedOut: false, aborted: false });
  });
});
