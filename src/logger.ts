/**
 * Logging: one pino root logger per process, writing JSON lines to stderr (stdout belongs to
 * command output), and a child logger per job bound to its queue, job id, workspace and attempt.
 */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  readonly level: string;
  /** Bound to every line, e.g. `{ component: 'worker', hostId }`. */
  readonly bindings?: Readonly<Record<string, unknown>>;
  /** Where lines go. @default stderr */
  readonly destination?: DestinationStream;
}

/** Creates the process root logger. */
export function createLogger({ level, bindings = {}, destination }: LoggerOptions): Logger {
  const logger = pino(
    { level, base: { pid: process.pid, ...bindings }, timestamp: pino.stdTimeFunctions.isoTime },
    destination ?? pino.destination({ fd: 2, sync: true }),
  );
  return logger;
}

/** Scope of a job's log lines. */
export interface JobScope {
  readonly queue: string;
  readonly jobId: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly workspaceId?: string;
}

/** A child logger bound to one job. */
export function jobLogger(root: Logger, scope: JobScope): Logger {
  return root.child({ ...scope });
}
