/**
 * Turns a Node filesystem error into a typed `StorageError`, by errno code, in this one place.
 * Fleet errors pass through unchanged.
 */
import { CrossDeviceError } from './cross-device-error.js';
import { DiskFullError } from './disk-full-error.js';
import { isFleetError } from './fleet-error.js';
import { NameTooLongError } from './name-too-long-error.js';
import { ReadOnlyStorageError } from './read-only-storage-error.js';
import type { StorageError } from './storage-error.js';
import { StorageIoError } from './storage-io-error.js';
import { SymlinkLoopError } from './symlink-loop-error.js';

const WHAT: Record<string, [new (...args: ConstructorParameters<typeof DiskFullError>) => StorageError, string]> = {
  ENOSPC: [DiskFullError, 'no space left on the filesystem'],
  EDQUOT: [DiskFullError, 'disk quota exceeded'],
  EROFS: [ReadOnlyStorageError, 'the filesystem is read-only'],
  EXDEV: [CrossDeviceError, 'the operation would cross filesystems'],
  ENAMETOOLONG: [NameTooLongError, 'the name or path is too long'],
  ELOOP: [SymlinkLoopError, 'a symlink is in the way and is never followed'],
};

/** The errno code of a Node system error, if it has one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Classifies `error` from `operation` on `path`; non-system errors are returned as they are. */
export function classifyStorageError(error: unknown, operation: string, path: string): Error {
  if (isFleetError(error)) return error;
  const errno = errnoOf(error);
  if (!errno || !/^E[A-Z0-9]+$/.test(errno)) return error instanceof Error ? error : new Error(String(error));
  const [Class, what] = WHAT[errno] ?? [StorageIoError, (error as Error).message];
  return new Class({ operation, path, errno }, what, { cause: error });
}
