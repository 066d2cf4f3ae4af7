/**
 * `AbortSignal.any` that keeps its sources alive, and a deadline built on it.
 *
 * Node 20 holds the sources of `AbortSignal.any` only weakly, and `AbortSignal.timeout` keeps its
 * own signal only weakly until someone listens to it. So
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])` (the obvious way to add a deadline) leaves
 * the timeout signal reachable from nothing: the first garbage collection after it is made
 * drops it, its timer finds no signal to abort, and the deadline never fires. A hung provider
 * call then waits for the caller's own (much longer) deadline, or forever.
 * (`test/unit/any-signal.test.ts` shows it under `--expose-gc`; CI met it as a 200 ms operation
 * timeout that fired after 30 s.)
 *
 * The signal returned here holds its sources strongly, so they live exactly as long as it does.
 * Use these instead of `AbortSignal.any` everywhere (a unit test keeps `src/` to that).
 */
const SOURCES = Symbol('any-signal sources');

/** Aborts when any of `signals` does, with that signal's reason. */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  const combined = AbortSignal.any(signals as AbortSignal[]);
  Object.defineProperty(combined, SOURCES, { value: signals.slice() });
  return combined;
}

/** Aborts when `signal` does or `timeoutMs` after this call (a `TimeoutError` reason), whichever first. */
export function deadlineSignal(signal: AbortSignal, timeoutMs: number): AbortSignal {
  return anySignal([signal, AbortSignal.timeout(timeoutMs)]);
}
