/** Durability helpers: fsync a directory, fsync a file, flush a whole filesystem. */
import { open } from 'node:fs/promises';
import { runCommand } from '../lib/run-command.js';
import { FleetError } from '../errors/fleet-error.js';

/** Thrown when data could not be made durable; the revision is abandoned, never retried in place. */
export class DurabilityError extends FleetError {
  readonly code = 'DurabilityFailed';
  readonly retryable = true;
}

/** fsyncs a directory (makes renames and creations inside it durable). */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** `syncfs` of the filesystem holding `dir` (one call flushes every file rsync wrote). */
export async function syncFilesystem(dir: string, systemPath: string, signal: AbortSignal): Promise<void> {
  const result = await runCommand('sync', ['-f', dir], { env: { PATH: systemPath }, timeoutMs: 120_000, signal });
  if (result.exitCode !== 0) throw new DurabilityError(`sync -f ${dir} failed: ${result.stderr.trim() || result.exitCode}`, { context: { dir } });
}
