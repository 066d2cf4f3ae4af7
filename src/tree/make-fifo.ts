/**
 * Creates a FIFO beneath a directory handle. Node has no mknod, so `mkfifo` runs with the
 * directory passed as its fd 3 and creates `/proc/self/fd/3/<temp name>` (an ASCII name: argv
 * cannot carry arbitrary bytes), which is then renamed to the real name beneath the handle.
 */
import { randomBytes } from 'node:crypto';
import { runCommand } from '../lib/run-command.js';
import type { DirHandle } from './dir-handle.js';

/** Deadline of one mkfifo. */
const MKFIFO_TIMEOUT_MS = 10_000;

/** Thrown when mkfifo fails (its stderr is the message). */
export class MakeFifoError extends Error {
  readonly code = 'EMKFIFO';
}

export async function makeFifo(dir: DirHandle, name: Buffer, mode: number, systemPath: string, signal?: AbortSignal): Promise<void> {
  const temp = Buffer.from(`.fleet-fifo-${randomBytes(6).toString('hex')}`);
  const result = await runCommand('mkfifo', ['-m', (mode & 0o777).toString(8), '--', `/proc/self/fd/3/${temp.toString('latin1')}`], {
    env: { PATH: systemPath },
    timeoutMs: MKFIFO_TIMEOUT_MS,
    ...(signal ? { signal } : {}),
    fds: [dir.fd],
  });
  if (result.exitCode !== 0) throw new MakeFifoError(`mkfifo: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
  await dir.rename(temp, dir, name);
}
