// The example Grafana dashboard charts every metric family /metrics exposes, in valid PromQL
// (promtool), and never adds up replicas: every replica serves the same fleet-wide counters, so
// each rate is first reduced across replicas by max() over the family's own labels.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RECORDED_FAMILIES } from '../../src/metrics/metric-families.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/fleet-env.js';

const exprsOf = (): string[] => {
  const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'grafana-dashboard.json'), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
};

describe('examples/grafana-dashboard.json', () => {
  it('is valid JSON whose panels query every fleet metric family', () => {
    const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'grafana-dashboard.json'), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)).join('\n');
    const families = [
      ...Object.values(RECORDED_FAMILIES).map((f) => (f.type === 'histogram' ? `${f.name}_bucket` : f.name)),
      'fleet_queue_jobs',
      'fleet_queue_unserved',
      'fleet_workers',
      'fleet_active_workspaces',
      'fleet_persist_lag_max_seconds',
      'fleet_fence_rejections_total',
    ];
    expect(families.filter((name) => !exprs.includes(name))).toEqual([]);
  });

  it('reduces every rate or increase of a counter or histogram across replicas with max() over the family\'s labels', () => {
    const labelsOf = new Map<string, string>(Object.values(RECORDED_FAMILIES).map((f) => [f.type === 'histogram' ? `${f.name}_bucket` : f.name, [...(f.type === 'histogram' ? ['le'] : []), ...f.labels].join(', ')]));
    const uses = exprsOf().flatMap((expr) => [...expr.matchAll(/(max by \(([^)]*)\) \(|max\()?(?:rate|increase)\((fleet_[a-z_]+)/g)].map((m) => ({ expr, wrap: m[1], by: m[2], metric: m[3]! })));
    expect(uses.length).toBeGreaterThan(10);
    for (const use of uses) {
      expect(use.wrap, use.expr).toBeDefined();
      const labels = labelsOf.get(use.metric);
      if (use.by !== undefined && labels !== undefined) expect(use.by, use.expr).toBe(labels);
    }
  });

  it('every query is valid PromQL (promtool check rules)', async () => {
    const dir = await tempDir('dashboard-rules');
    const rules = exprsOf().map((expr, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr.replaceAll('$__rate_interval', '5m'))}`);
    const file = path.join(dir, 'rules.yml');
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`);
    expect(execFileSync('promtool', ['check', 'rules', file], { encoding: 'utf8' })).toContain(`SUCCESS: ${rules.length} rules found`);
  });
});
