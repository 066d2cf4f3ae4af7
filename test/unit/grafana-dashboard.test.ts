// The example Grafana dashboard charts every metric family /metrics exposes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RECORDED_FAMILIES } from '../../src/metrics/metric-families.js';
import { ROOT } from '../helpers/processes.js';

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
});
