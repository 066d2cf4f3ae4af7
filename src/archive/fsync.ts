/** Durability helpers: fsync a directory, fsync a file, flush a whole filesystem. */
import { open } from 'node:fs/promises';
import { runCommand } from '../lib/run-command.js';
import { carries, shellHelpers } from '../lib/shell-helpers.js';
import { DurabilityError } from './durability-error.js';

export { DurabilityError } from './durability-error.js';

/** Longest a `syncfs` may take before the persist fails (`DurabilityError`, retryable). */
export const SYNC_TIMEOUT_MS = 120_000;

/** fsyncs a directory (makes renames and creations inside it durable). */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * `syncfs` of the filesystem holding `dir` (one call flushes every file the persist wrote): `sync
 * -f` run by a long-lived shell helper (lib/shell-helpers.ts), never a fork of this process.
 */
export async function syncFilesystem(dir: string, systemPath: string, signal: AbortSignal): Promise<void> {
  if (!carries(dir)) return syncOnce(dir, systemPath, signal);
  let answer;
  try {
    answer = await shellHelpers(systemPath).call(['sync', dir], { timeoutMs: SYNC_TIMEOUT_MS, signal });
  } catch (error) {
    throw new DurabilityError(`sync -f ${dir} failed: ${(error as Error).message}`, { context: { dir }, cause: error });
  }
  if (answer.status !== 0) throw new DurabilityError(`sync -f ${dir} failed: ${answer.said.trim() || `exit status ${answer.status}`}`, { context: { dir, exitCode: answer.status } });
}

// `sync -f` as a process of its own, for a directory a helper's request line cannot carry.
async function syncOnce(dir: string, systemPath: string, signal: AbortSignal): Promise<void> {
  const result = await runCommand('sync', ['-f', '--', dir], { env: { PATH: systemPath }, timeoutMs: SYNC_TIMEOUT_MS, signal });
  if (result.exitCode !== 0) throw new DurabilityError(`sync -f ${dir} failed: ${result.stderr.trim() || result.exitCode}`, { context: { dir } });
}
