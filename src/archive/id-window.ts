/**
 * A slice of the object id space, for `--read-data-subset` (kopia-style rotation): ids are
 * SHA-256 digests, uniform in their first 32 bits, so the ids whose first 8 hex digits fall in
 * a window of p % of 2^32 are about p % of all objects, and consecutive windows cover every id
 * exactly once per 100 / p runs. Pure.
 */

/** The first 32 bits of an id span this many values. */
export const ID_SPACE = 2 ** 32;

export interface IdWindow {
  /** First value (inclusive) of the first 32 bits. */
  readonly start: number;
  /** Values covered, wrapping past 2^32 (ID_SPACE: every id). */
  readonly width: number;
}

/** The width of `percent` % of the id space (at least one value). */
export function windowWidth(percent: number): number {
  return Math.max(1, Math.min(ID_SPACE, Math.round((percent / 100) * ID_SPACE)));
}

/** True when `id` (lower-case hex) falls in the window. */
export function inWindow(window: IdWindow, id: string): boolean {
  const value = Number.parseInt(id.slice(0, 8), 16);
  return (value - window.start + ID_SPACE) % ID_SPACE < window.width;
}

/** The window as hex prefixes `from..to` (to exclusive), for people. */
export function windowLabel(window: IdWindow): { readonly from: string; readonly to: string } {
  const hex = (v: number) => (v % ID_SPACE).toString(16).padStart(8, '0');
  return { from: hex(window.start), to: hex(window.start + window.width) };
}
