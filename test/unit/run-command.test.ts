// runCommand's kill discipline on a deadline or an abort: SIGTERM to the group first, SIGKILL
// only for what is still there after the grace. Every wait is on the child's exit (the awaited
// result), never on a timer of the test. Also: a piped stdin says when it has drained, whether
// the kernel took a write at once or only later.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/lib/run-command.js';
import { ROOT } from '../helpers/processes.js';

const IGNORE_SIGTERM = path.join(ROOT, 'test/fixtures/ignore-sigterm.mjs');
const SHELL_ENV = { PATH: '/usr/bin:/bin' };
const CHUNK = 4 * 1024 * 1024;

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

  it('says when its stdin has handed everything piped in so far to the kernel after a write it had to queue (a drain)', async () => {
    // The child reads nothing until the test writes a byte to its fd 3: the first 4 MiB chunk is
    // more than a socket's buffer takes, so it stays queued until then.
    const dir = mkdtempSync(path.join(tmpdir(), 'run-command-'));
    const gate = path.join(dir, 'gate');
    execFileSync('mkfifo', [gate]);
    const gateFd = openSync(gate, 'r+');
    try {
      const input = new PassThrough();
      const drained: number[] = [];
      let piped = 0;
      let released = false;
      const run = runCommand('sh', ['-c', 'head -c 1 <&3 >/dev/null && exec wc -c'], { env: SHELL_ENV, timeoutMs: 60_000, stdin: input, fds: [gateFd], onStdinDrained: () => drained.push(released ? piped : -1) });
      // Runs after the pipe's write of the first chunk: only then is the child let read.
      input.once('data', () => {
        released = true;
        writeSync(gateFd, 'x');
      });
      for (let i = 0; i < 4; i++) {
        piped += CHUNK;
        if (!input.write(Buffer.alloc(CHUNK, i))) await once(input, 'drain');
      }
      input.end();
      const result = await run;
      expect(result.stdout.trim()).toBe(String(4 * CHUNK));
      expect(drained.length).toBeGreaterThan(0);
      // Never before the child read, and never more than was piped by then.
      expect(drained.every((bytes) => bytes > 0 && bytes <= piped)).toBe(true);
    } finally {
      closeSync(gateFd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says so too after a write the kernel took whole at once (no drain follows one)', async () => {
    const input = new PassThrough();
    const drained: number[] = [];
    let piped = 0;
    let told = (): void => undefined;
    const toldOnce = new Promise<void>((resolve) => (told = resolve));
    const run = runCommand('wc', ['-c'], { env: SHELL_ENV, timeoutMs: 60_000, stdin: input, onStdinDrained: () => { drained.push(piped); told(); } });
    // Far under a socket's buffer and under the stream's high-water mark: taken whole, no drain.
    piped = 1024;
    expect(input.write(Buffer.alloc(1024, 1))).toBe(true);
    await toldOnce;
    input.end();
    const result = await run;
    expect(result.stdout.trim()).toBe('1024');
    expect(drained).toEqual([1024]);
  });

  it('reports a normal exit as a result, with no signal', async () => {
    const result = await runCommand('sh', ['-c', 'echo out; echo err >&2; exit 3'], { env: SHELL_ENV, timeoutMs: 60_000 });
    expect(result).toMatchObject({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', timedOut: false, aborted: false });
  });

  it('reports a command that could not start as a result (no exit code, no signal), not an error', async () => {
    const result = await runCommand('no-such-command-anywhere', ['x'], { env: SHELL_ENV, timeoutMs: 60_000 });
    expect(result).toMatchObject({ command: 'no-such-command-anywhere x', exitCode: null, signal: null, stdout: '', timedOut: false, aborted: false });
  });

  it('gives the child exactly its environment, its input on stdin and a parent fd as its fd 3, in its own process group', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'fleet-run-command-'));
    try {
      const file = path.join(dir, 'fd3');
      writeFileSync(file, 'from fd 3');
      const fd = openSync(file, 'r');
      try {
        const script = 'env | sort; echo "--"; cat; echo "--"; cat <&3; echo; echo "-- $(ps -o pgid= -p $$ | tr -d " ")=$$"';
        const result = await runCommand('sh', ['-c', script], { env: { ...SHELL_ENV, ONLY: 'this' }, timeoutMs: 60_000, input: 'piped in', fds: [fd] });
        expect(result.exitCode).toBe(0);
        const [env, input, fd3, group] = result.stdout.split('--');
        expect(env!.trim().split('\n').filter((line) => !/^(PWD|SHLVL|_)=/.test(line))).toEqual(['ONLY=this', 'PATH=/usr/bin:/bin']);
        expect(input!.trim()).toBe('piped in');
        expect(fd3!.trim()).toBe('from fd 3');
        const [pgid, pid] = group!.trim().split('=');
        expect(pgid).toBe(pid);
      } finally {
        closeSync(fd);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(process.getuid?.() === 0)('runs the child as the uid and gid it is given', async () => {
    const result = await runCommand('sh', ['-c', 'id -u; id -g; id -G'], { env: SHELL_ENV, timeoutMs: 60_000, runAs: { uid: 65534, gid: 65533 } });
    expect(result.stdout.trim().split('\n')).toEqual(['65534', '65533', '65533']);
  });
});
