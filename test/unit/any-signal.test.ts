// Deadlines survive garbage collection: a signal from `deadlineSignal` aborts on time even when
// a GC runs between its making and its timeout (Node 20's `AbortSignal.any` holds its sources
// weakly, so a bare `AbortSignal.any([s, AbortSignal.timeout(ms)])` never fires after one), and
// `src/` makes no combined signal any other way.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anySignal, deadlineSignal } from '../../src/lib/any-signal.js';
import { ROOT } from '../helpers/processes.js';

// Runs in a child with --expose-gc against the built module: prints how the deadline ended.
const CHILD = `
const { deadlineSignal } = await import(process.argv[1]);
const caller = new AbortController();
const deadline = deadlineSignal(caller.signal, 200);
const started = Date.now();
deadline.addEventListener('abort', () => { console.log(JSON.stringify({ reason: deadline.reason.name, callerAborted: caller.signal.aborted })); process.exit(0); });
setTimeout(() => globalThis.gc(), 20);
setTimeout(() => globalThis.gc(), 100);
setTimeout(() => { console.log(JSON.stringify({ reason: 'never' })); process.exit(0); }, 20_000);
`;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('anySignal / deadlineSignal', () => {
  it('a deadline fires by its timeout after garbage collections, with a TimeoutError, the caller untouched', () => {
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD, path.join(ROOT, 'dist', 'lib', 'any-signal.js')], { encoding: 'utf8', timeout: 120_000 });
    expect(JSON.parse(out.trim())).toEqual({ reason: 'TimeoutError', callerAborted: false });
  });

  it('aborts with the reason of whichever source aborts first', () => {
    const a = new AbortController();
    const b = new AbortController();
    const combined = anySignal([a.signal, b.signal]);
    expect(combined.aborted).toBe(false);
    b.abort(new Error('second'));
    expect(combined.aborted).toBe(true);
    expect((combined.reason as Error).message).toBe('second');
    const caller = new AbortController();
    caller.abort(new Error('caller'));
    expect((deadlineSignal(caller.signal, 60_000).reason as Error).message).toBe('caller');
  });

  it('src/ combines signals only through anySignal (AbortSignal.any drops its sources on GC in Node 20)', () => {
    const offenders = sourceFiles(path.join(ROOT, 'src'))
      .filter((file) => !file.endsWith(path.join('lib', 'any-signal.ts')))
      .filter((file) => readFileSync(file, 'utf8').includes('AbortSignal.any('))
      .map((file) => path.relative(ROOT, file));
    expect(offenders).toEqual([]);
  });
});
