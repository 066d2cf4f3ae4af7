// The benchmark runner's arguments: `--skip` leaves a benchmark out of the run (CI runs the
// loss window in a stage of its own), and a name it does not know is refused, naming it, before
// anything runs.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

const run = promisify(execFile);
const bench = (...args: string[]) =>
  run(path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'bench/run.ts'), ...args], { cwd: ROOT, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );

describe('npm run bench', () => {
  it('--skip leaves the named benchmark out; an unknown one is refused by name before anything runs', async () => {
    // The only benchmark named is skipped: nothing runs, nothing is reported.
    expect(await bench('queue', '--skip', 'queue')).toMatchObject({ code: 0, stdout: '' });
    const unknown = await bench('--skip', 'no-such-bench', '--repeats', '1');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('--skip: unknown benchmark "no-such-bench"; known: queue, persist');
  });
});
