/**
 * Turns the metrics hash (one HGETALL) into prom-client metric values: counters as they are,
 * histograms as cumulative `_bucket` series plus `_sum` and `_count`, in bucket order.
 */
import type { MetricValue, MetricValueWithName } from 'prom-client';
import type { RecordedFamily } from './metric-families.js';
import { parseField, type Labels, type ParsedField } from './metric-fields.js';

type Value = MetricValue<string> | MetricValueWithName<string>;

// Parsed fields of the hash, grouped by metric name.
export function groupFields(hash: Readonly<Record<string, string>>): Map<string, { field: ParsedField; value: number }[]> {
  const byName = new Map<string, { field: ParsedField; value: number }[]>();
  for (const [raw, text] of Object.entries(hash)) {
    const field = parseField(raw);
    const value = Number(text);
    if (!field || !Number.isFinite(value)) continue;
    const list = byName.get(field.name) ?? [];
    list.push({ field, value });
    byName.set(field.name, list);
  }
  return byName;
}

const seriesKey = (labels: Labels): string => JSON.stringify(labels);

// Labels in the family's declared order (the hash stores them sorted).
function ordered(family: RecordedFamily, labels: Labels): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of family.labels) if (labels[name] !== undefined) out[name] = labels[name];
  for (const [name, value] of Object.entries(labels)) if (!(name in out)) out[name] = value;
  return out;
}

/** The values of one recorded family. */
export function familyValues(family: RecordedFamily, fields: readonly { field: ParsedField; value: number }[]): Value[] {
  if (family.type === 'counter') {
    return fields.filter(({ field }) => field.kind === 'c').map(({ field, value }) => ({ labels: ordered(family, field.labels), value }));
  }
  const bounds = [...(family.buckets ?? []).map(String), '+Inf'];
  const series = new Map<string, { labels: Labels; buckets: Map<string, number>; sum: number }>();
  for (const { field, value } of fields) {
    const key = seriesKey(field.labels);
    const entry = series.get(key) ?? { labels: ordered(family, field.labels), buckets: new Map<string, number>(), sum: 0 };
    if (field.kind === 'b' && field.le !== undefined) entry.buckets.set(field.le, (entry.buckets.get(field.le) ?? 0) + value);
    if (field.kind === 's') entry.sum += value;
    series.set(key, entry);
  }
  const values: Value[] = [];
  for (const { labels, buckets, sum } of series.values()) {
    let cumulative = 0;
    for (const le of bounds) {
      cumulative += buckets.get(le) ?? 0;
      values.push({ metricName: `${family.name}_bucket`, labels: { ...labels, le }, value: cumulative });
    }
    values.push({ metricName: `${family.name}_sum`, labels: { ...labels }, value: sum });
    values.push({ metricName: `${family.name}_count`, labels: { ...labels }, value: cumulative });
  }
  return values;
}
