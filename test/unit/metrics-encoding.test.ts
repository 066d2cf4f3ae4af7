// The metrics hash encoding and its rendering into cumulative histogram series.
import { describe, expect, it } from 'vitest';
import { RECORDED_FAMILIES } from '../../src/metrics/metric-families.js';
import { bucketField, bucketFor, counterField, parseField, sumField } from '../../src/metrics/metric-fields.js';
import { familyValues, groupFields } from '../../src/metrics/recorded-series.js';

describe('metric fields', () => {
  it('round-trip counters, buckets and sums with labels in canonical order', () => {
    expect(counterField('fleet_x', { b: '2', a: '1' })).toBe(counterField('fleet_x', { a: '1', b: '2' }));
    expect(parseField(counterField('fleet_x', { queue: 'persist@h|1' }))).toEqual({ kind: 'c', name: 'fleet_x', labels: { queue: 'persist@h|1' } });
    expect(parseField(bucketField('fleet_h', { q: 'a' }, '0.5'))).toEqual({ kind: 'b', name: 'fleet_h', labels: { q: 'a' }, le: '0.5' });
    expect(parseField(sumField('fleet_h', {}))).toEqual({ kind: 's', name: 'fleet_h', labels: {} });
    expect(parseField('garbage')).toBeNull();
    expect(parseField('c|fleet_x|not json')).toBeNull();
  });

  it('puts a value in the smallest bucket that holds it', () => {
    expect(bucketFor([1, 5, 10], 0)).toBe('1');
    expect(bucketFor([1, 5, 10], 1)).toBe('1');
    expect(bucketFor([1, 5, 10], 1.01)).toBe('5');
    expect(bucketFor([1, 5, 10], 11)).toBe('+Inf');
  });

  it('renders per-bucket counts as cumulative buckets with _sum and _count', () => {
    const family = RECORDED_FAMILIES.persistLag;
    const hash = {
      [bucketField(family.name, {}, '1')]: '2',
      [bucketField(family.name, {}, '30')]: '1',
      [bucketField(family.name, {}, '+Inf')]: '1',
      [sumField(family.name, {})]: '4000.5',
      [counterField('fleet_other', {})]: '9',
    };
    const values = familyValues(family, groupFields(hash).get(family.name)!);
    const bucket = (le: string) => values.find((v) => 'metricName' in v && v.metricName === `${family.name}_bucket` && v.labels.le === le)?.value;
    expect(bucket('1')).toBe(2);
    expect(bucket('5')).toBe(2);
    expect(bucket('30')).toBe(3);
    expect(bucket('3600')).toBe(3);
    expect(bucket('+Inf')).toBe(4);
    expect(values.find((v) => 'metricName' in v && v.metricName === `${family.name}_count`)?.value).toBe(4);
    expect(values.find((v) => 'metricName' in v && v.metricName === `${family.name}_sum`)?.value).toBe(4000.5);
  });
});
