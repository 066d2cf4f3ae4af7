/**
 * The last check before a GC kind deletes anything: every id it is about to act on, wherever it
 * was read from, must follow its rule (providers/id-rules.ts). An invalid one is reported to the run
 * (logged with its value, counted) and the caller skips the item.
 */
import { firstInvalidId, type IdSet } from '../providers/id-rules.js';
import type { GcContext } from './gc-kind.js';

/** True when every id of `ids` is valid; otherwise reports the first invalid one and returns false. */
export function idsValid(ctx: Pick<GcContext, 'skip'>, ids: IdSet): boolean {
  const invalid = firstInvalidId(ids);
  if (invalid) ctx.skip(invalid);
  return invalid === null;
}
