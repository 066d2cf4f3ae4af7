/**
 * rsync exit codes → one typed error with a retry intent (reference/reliability.md §4.1).
 * Nothing is ever committed unless rsync exited 0 (or 24 for an upload-only run).
 */
import { FleetError } from '../errors/fleet-error.js';

/** What an exit code means for a persist. */
export interface RsyncExitClass {
  readonly meaning: string;
  readonly retryable: boolean;
}

const TABLE: Readonly<Record<number, RsyncExitClass>> = {
  1: { meaning: 'syntax or usage error', retryable: false },
  2: { meaning: 'protocol incompatibility', retryable: false },
  3: { meaning: 'errors selecting input/output files or dirs', retryable: false },
  4: { meaning: 'requested action not supported', retryable: false },
  5: { meaning: 'error starting client-server protocol', retryable: true },
  6: { meaning: 'daemon unable to append to log-file', retryable: false },
  10: { meaning: 'error in socket I/O', retryable: true },
  11: { meaning: 'error in file I/O (disk full or destination problem)', retryable: true },
  12: { meaning: 'error in rsync protocol data stream', retryable: true },
  13: { meaning: 'errors with program diagnostics', retryable: false },
  14: { meaning: 'error in IPC code', retryable: true },
  20: { meaning: 'received SIGUSR1 or SIGINT', retryable: true },
  21: { meaning: 'some error returned by waitpid()', retryable: true },
  22: { meaning: 'error allocating core memory buffers', retryable: true },
  23: { meaning: 'partial transfer due to error (unreadable or missing source files)', retryable: true },
  24: { meaning: 'partial transfer due to vanished source files', retryable: true },
  25: { meaning: '--max-delete limit stopped deletions', retryable: false },
  30: { meaning: 'timeout in data send/receive', retryable: true },
  35: { meaning: 'timeout waiting for daemon connection', retryable: true },
};

/** Classifies an exit code (unknown codes are permanent: they need a human). */
export function classifyRsyncExit(exitCode: number): RsyncExitClass {
  return TABLE[exitCode] ?? { meaning: `unknown exit code ${exitCode}`, retryable: false };
}

/** Thrown when rsync exits non-zero; nothing it wrote is committed. */
export class RsyncError extends FleetError {
  readonly code = 'RsyncFailed';
  readonly retryable: boolean;
  readonly exitCode: number;

  constructor(exitCode: number, operation: string, stderr: string) {
    const cls = classifyRsyncExit(exitCode);
    super(`rsync ${operation} exited ${exitCode} (${cls.meaning}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`, {
      context: { exitCode, operation },
    });
    this.exitCode = exitCode;
    this.retryable = cls.retryable;
  }
}
