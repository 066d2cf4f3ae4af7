/**
 * Filesystem errors of the local provider → classified provider errors, by errno code.
 * ENOENT means the live tree is gone (rebuild); I/O trouble (EIO, ENOSPC, EROFS, EBUSY) is
 * transient (busy); permission and shape problems are permanent.
 */
import { ProviderBusyError, ProviderGoneError, ProviderPermanentError, isProviderError, type ProviderError } from '../provider-errors.js';
import { isFleetError } from '../../errors/fleet-error.js';

const GONE = new Set(['ENOENT', 'ENOTDIR']);
const BUSY = new Set(['EIO', 'ENOSPC', 'EROFS', 'EBUSY', 'EAGAIN', 'EMFILE', 'ENFILE', 'ETIMEDOUT', 'EDQUOT']);

export function classifyFsError(error: unknown, operation: string): Error {
  if (isProviderError(error) || isFleetError(error)) return error as Error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  let classified: ProviderError;
  if (code && GONE.has(code)) classified = new ProviderGoneError('local', operation, message, { cause: error, context: { errno: code } });
  else if (code && BUSY.has(code)) classified = new ProviderBusyError('local', operation, message, { cause: error, context: { errno: code } });
  else classified = new ProviderPermanentError('local', operation, message, { cause: error, context: { errno: code ?? null } });
  return classified;
}
