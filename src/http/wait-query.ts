/**
 * `?wait=true[&timeoutMs=N]`: wait for the job's result instead of answering 202. The wait is cut
 * to `FLEET_HTTP_WAIT_CAP_MS`; past it the answer is 504 `WaitTimeout` (the job keeps running).
 */
import { z } from 'zod';
import { parsePayload } from '../queues/payload.js';

export const WaitQuery = z
  .object({
    wait: z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).optional(),
    timeoutMs: z.string({ error: 'must be a number' }).regex(/^\d{1,10}$/, { error: 'must be a whole number of milliseconds' }).optional(),
  })
  .strict();
export type WaitQuery = z.infer<typeof WaitQuery>;

export interface WaitOptions {
  readonly wait: boolean;
  readonly timeoutMs: number;
  /** The request's id (`X-Request-Id`), carried into the jobs it enqueues. */
  readonly reqId?: string;
}

/** Parses the query (400 on bad values or unknown parameters) and applies the cap. */
export function resolveWait(query: Record<string, string>, capMs: number): WaitOptions {
  const parsed = parsePayload('query', WaitQuery, query);
  const asked = parsed.timeoutMs === undefined ? capMs : Math.max(1, Number(parsed.timeoutMs));
  return { wait: parsed.wait === 'true' || parsed.wait === '1', timeoutMs: Math.min(asked, capMs) };
}
