import { ProviderBusyError } from '../provider-errors.js';
import { classifyOperationError } from './classify-vercel-error.js';
import { deadlineSignal } from '../../lib/any-signal.js';

/**
 * Runs `fn` with a signal that aborts when the caller's `signal` does or after `timeoutMs`,
 * whichever comes first, and classifies whatever it throws (host storage errors of the mirror
 * keep their own class). Every SDK call of the provider runs inside one of these, so none can
 * outlive the job's deadline. A fired deadline is
 * `ProviderBusyError` (the provider did not answer in time) whatever the SDK made of the abort.
 */
export async function withDeadline<T>(operation: string, signal: AbortSignal, timeoutMs: number, fn: (deadline: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = deadlineSignal(signal, timeoutMs);
  try {
    return await fn(deadline);
  } catch (error) {
    if (deadline.aborted) {
      const by = signal.aborted ? 'the caller' : `its ${timeoutMs} ms timeout`;
      throw new ProviderBusyError('vercel', operation, `deadline exceeded (aborted by ${by})`, { cause: error, context: { timeoutMs, callerAborted: signal.aborted } });
    }
    throw classifyOperationError(error, operation);
  }
}
