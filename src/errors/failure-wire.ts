/**
 * The structured form of a job failure as it crosses BullMQ: what the worker knew about the error
 * (its code, retry intent and context), so the caller can rebuild the same error class. Written
 * from an error by `toFailureWire` (bounded), read back with the `FailureWire` schema.
 */
import { z } from 'zod';
import { boundContext, capText } from './bound-context.js';
import { isFleetError } from './fleet-error.js';

/** Shape of an error code (`StaleGeneration`, `RsyncFailed`, ...). */
export const FAILURE_CODE = /^[A-Z][A-Za-z0-9]*$/;
/** Longest message kept; rsync stderr or a long issue list can be far longer. */
export const MAX_FAILURE_MESSAGE = 4_096;

export const FailureWire = z.object({
  code: z.string().max(64).regex(FAILURE_CODE),
  /** The class the worker threw (`StaleGenerationError`); absent for foreign errors. */
  name: z.string().max(100).optional(),
  message: z.string().max(MAX_FAILURE_MESSAGE + 64),
  /** Whether running the same job again may succeed, as the worker's error said. */
  retryable: z.boolean(),
  context: z.record(z.string(), z.unknown()),
});
export type FailureWire = z.infer<typeof FailureWire>;

// The message of anything thrown, without letting a hostile toString throw.
function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

/** The wire form of `error`. Errors the fleet did not create are `Unexpected` and retryable (as the worker treats them). */
export function toFailureWire(error: unknown): FailureWire {
  const message = capText(messageOf(error), MAX_FAILURE_MESSAGE);
  if (!isFleetError(error)) return { code: 'Unexpected', message, retryable: true, context: {} };
  const code = error.code.length <= 64 && FAILURE_CODE.test(error.code) ? error.code : 'Unexpected';
  const context = typeof error.context === 'object' && error.context !== null ? boundContext(error.context) : {};
  return { code, name: error.name.slice(0, 100), message, retryable: error.retryable, context };
}
