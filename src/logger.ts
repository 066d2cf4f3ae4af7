/**
 * Logging: one pino root logger per process, writing to stderr (stdout belongs to command
 * output) as JSON lines, or as readable lines on a terminal (`FLEET_LOG_FORMAT`), and a child
 * logger per job bound to its queue, job id, workspace and attempt.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import { PinoPretty } from 'pino-pretty';

export type { Logger } from 'pino';

export interface LoggerOptions {
  readonly level: string;
  /** Bound to every line, e.g. `{ component: 'worker', hostId }`. */
  readonly bindings?: Readonly<Record<string, unknown>>;
  /** Where lines go. @default stderr */
  readonly destination?: DestinationStream;
  /** `json` lines, `pretty` lines, or `auto`: pretty when stderr is a terminal. @default json */
  readonly format?: 'auto' | 'json' | 'pretty';
}

/** Creates the process root logger. */
export function createLogger({ level, bindings = {}, destination, format = 'json' }: LoggerOptions): Logger {
  const pretty = format === 'pretty' || (format === 'auto' && destination === undefined && process.stderr.isTTY === true);
  const out = pretty
    ? PinoPretty({ destination: destination ?? 2, sync: true, colorize: destination === undefined && process.stderr.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
    : (destination ?? pino.destination({ fd: 2, sync: true }));
  return pino({ level, base: { pid: process.pid, ...bindings }, timestamp: pino.stdTimeFunctions.isoTime }, out);
}

/** Scope of a job's log lines. */
export interface JobScope {
  readonly queue: string;
  readonly jobId: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly workspaceId?: string;
  /** The HTTP request that caused the job (job-trace.ts). */
  readonly reqId?: string;
}

/** A child logger bound to one job. */
export function jobLogger(root: Logger, scope: JobScope): Logger {
  return root.child({ ...scope });
}
