/**
 * Pure encoding of the metrics hash (`{prefix}:metrics`): one field per counter series and per
 * histogram bucket, so every process adds with HINCRBY / HINCRBYFLOAT and a scrape reads it all
 * with one HGETALL.
 *
 * Field shapes (labels as JSON with sorted keys):
 *   c|<name>|<labels>          counter value
 *   b|<name>|<labels>|<le>     observations in this bucket only (not cumulative; `+Inf` last)
 *   s|<name>|<labels>          histogram sum (seconds)
 */
export type Labels = Readonly<Record<string, string>>;

export interface ParsedField {
  readonly kind: 'c' | 'b' | 's';
  readonly name: string;
  readonly labels: Labels;
  /** Bucket upper bound (`+Inf` for the overflow bucket); `b` fields only. */
  readonly le?: string;
}

// Labels as canonical JSON (sorted keys), so one series always maps to one field.
function labelKey(labels: Labels): string {
  return JSON.stringify(Object.fromEntries(Object.keys(labels).sort().map((k) => [k, labels[k]])));
}

export const counterField = (name: string, labels: Labels): string => `c|${name}|${labelKey(labels)}`;
export const sumField = (name: string, labels: Labels): string => `s|${name}|${labelKey(labels)}`;
export const bucketField = (name: string, labels: Labels, le: string): string => `b|${name}|${labelKey(labels)}|${le}`;

/** The bound of the smallest bucket holding `value` (`+Inf` when above every bound). */
export function bucketFor(bounds: readonly number[], value: number): string {
  for (const bound of bounds) if (value <= bound) return String(bound);
  return '+Inf';
}

/** Parses a field written by this module; `null` for anything else. */
export function parseField(field: string): ParsedField | null {
  const kind = field[0];
  if ((kind !== 'c' && kind !== 'b' && kind !== 's') || field[1] !== '|') return null;
  const rest = field.slice(2);
  const bar = rest.indexOf('|');
  if (bar <= 0) return null;
  const name = rest.slice(0, bar);
  let json = rest.slice(bar + 1);
  let le: string | undefined;
  if (kind === 'b') {
    const last = json.lastIndexOf('|');
    if (last < 0) return null;
    le = json.slice(last + 1);
    json = json.slice(0, last);
  }
  try {
    const labels = JSON.parse(json) as unknown;
    if (labels === null || typeof labels !== 'object' || Array.isArray(labels)) return null;
    return { kind, name, labels: labels as Labels, ...(le === undefined ? {} : { le }) };
  } catch {
    return null;
  }
}
