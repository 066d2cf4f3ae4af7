/**
 * Where an export writes: a target that must not hold anything yet (an absent path, or for a
 * directory an empty one), and a private temporary beside it that is renamed (or, for a file,
 * linked) into place only when complete, so a failed or killed export never leaves a partial
 * tree or tar under the target's name.
 */
import { randomBytes } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf } from '../errors/classify-storage-error.js';
import { UsageError } from '../errors/usage-error.js';

/** Throws `UsageError` unless `target` can receive an export of `kind`. */
export async function checkExportTarget(target: string, kind: 'dir' | 'tar'): Promise<void> {
  const stats = await lstat(target).catch((error: unknown) => (errnoOf(error) === 'ENOENT' ? null : Promise.reject(error)));
  const parent = await lstat(path.dirname(target)).catch(() => null);
  if (!parent?.isDirectory()) throw new UsageError(`${kind === 'dir' ? '--to' : '--tar'}: the parent directory of ${target} does not exist`, { context: { target } });
  if (!stats) return;
  if (kind === 'tar') throw new UsageError(`--tar: ${target} already exists (an export never overwrites)`, { context: { target } });
  if (!stats.isDirectory() || (await readdir(target)).length > 0) throw new UsageError(`--to: ${target} is not an empty directory (an export never writes into existing files)`, { context: { target } });
}

/** A temporary name beside `target` (same filesystem, so the final rename is atomic). */
export function exportTemp(target: string): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.fleet-export-${randomBytes(4).toString('hex')}`);
}
