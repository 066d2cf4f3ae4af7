/**
 * One signal handler per process (graphile-worker style): the first SIGTERM/SIGINT starts a
 * graceful shutdown with a deadline; a second signal, or the deadline, forces the exit.
 */
import type { Logger } from '../logger.js';

export interface ShutdownOptions {
  readonly logger: Logger;
  /** Graceful part: stop taking work, let active jobs finish, release resources. */
  readonly shutdown: (signal: NodeJS.Signals) => Promise<void>;
  /** Hard deadline after the first signal. */
  readonly deadlineMs: number;
  /** Injected for tests. @default process.exit */
  readonly exit?: (code: number) => void;
}

/** Installs the handlers; returns a function that removes them. */
export function installShutdownHandlers({ logger, shutdown, deadlineMs, exit = (code) => process.exit(code) }: ShutdownOptions): () => void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: forcing exit');
      exit(1);
      return;
    }
    stopping = true;
    logger.info({ signal, deadlineMs }, 'shutting down gracefully');
    const timer = setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown deadline passed: forcing exit');
      exit(1);
    }, deadlineMs);
    timer.unref();
    shutdown(signal).then(
      () => {
        clearTimeout(timer);
        logger.info('shutdown complete');
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(timer);
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
