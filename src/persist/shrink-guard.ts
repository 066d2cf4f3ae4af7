/**
 * The shrink guard (pure): a reconcile that would remove more than `pct` percent of the files of
 * a non-trivial revision is refused unless forced. Small revisions (fewer than
 * `MIN_GUARDED_FILES` files) are not guarded: deleting 3 of 4 files is a normal edit.
 */
export const MIN_GUARDED_FILES = 10;

export interface ShrinkCheck {
  readonly previousFiles: number;
  readonly removedFiles: number;
  readonly pct: number;
  readonly force: boolean;
}

/** Returns a refusal reason, or null when the change may proceed. */
export function shrinkGuardRefusal({ previousFiles, removedFiles, pct, force }: ShrinkCheck): string | null {
  if (force || previousFiles < MIN_GUARDED_FILES || removedFiles === 0) return null;
  const removedPct = (removedFiles / previousFiles) * 100;
  if (removedPct <= pct) return null;
  return `reconcile would remove ${removedFiles} of ${previousFiles} files (${removedPct.toFixed(1)}% > ${pct}%); persist with force: true if intended`;
}
