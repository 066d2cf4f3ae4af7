/**
 * An `AbortSignal` that fires on the first SIGINT or SIGTERM while `action` runs, so a long
 * command (export, migrate) stops at its next step and removes its temporaries instead of being
 * killed in the middle of them. A second signal gets the default behaviour (the process ends).
 */
export async function withInterrupt<T>(action: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    controller.abort(new Error(`interrupted by ${signal}`));
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await action(controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
