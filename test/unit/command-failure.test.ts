import { describe, expect, it } from 'vitest';
import { commandFailure } from '../../src/lib/command-failure.js';

const ok = { exitCode: 0, timedOut: false, stdout: 'fine\n', stderr: '' };

describe('commandFailure', () => {
  it('is null for a command that exited 0 in time', () => {
    expect(commandFailure('setup command 1', 'true', ok)).toBeNull();
  });

  it('names the step, the exit, the command and the last lines of stderr (else stdout)', () => {
    const stderr = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(commandFailure('setup command 2', 'make', { ...ok, exitCode: 2, stderr })).toBe('setup command 2 failed (exit 2): make → line 4 | line 5 | line 6 | line 7 | line 8');
    expect(commandFailure('migrate 1', 'x', { ...ok, exitCode: 1, stdout: 'a\nb\nc\nd' }, 3)).toBe('migrate 1 failed (exit 1): x → b | c | d');
  });

  it('says a timeout and a signal, and leaves the tail out when there is no output', () => {
    expect(commandFailure('smoke check 1', 'sleep 9', { exitCode: null, signal: 'SIGKILL', timedOut: true, stdout: '', stderr: '' })).toBe('smoke check 1 failed (exit SIGKILL, timed out): sleep 9');
    expect(commandFailure('smoke check 1', 'true', { ...ok, timedOut: true })).toBe('smoke check 1 failed (exit 0, timed out): true → fine');
  });
});
