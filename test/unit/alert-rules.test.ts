// The shipped Prometheus alert rules (examples/prometheus/alerts.yml): valid for `promtool check
// rules`, passing their own promtool unit tests (each alert fires on the series that should fire
// it, with two replicas reporting the same fleet-wide numbers), and each alert has its runbook
// section in docs/runbook.md, where its runbook_url points.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

const DIR = path.join(ROOT, 'examples/prometheus');
const promtool = (...args: string[]) => execFileSync('promtool', args, { cwd: DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('alert rules', () => {
  it('pass promtool check rules', () => {
    expect(promtool('check', 'rules', 'alerts.yml')).toContain('SUCCESS: 10 rules found');
  });

  it('pass their promtool unit tests', () => {
    expect(promtool('test', 'rules', 'alerts.test.yml')).toContain('SUCCESS');
  });

  it('every alert is unit-tested and has a runbook section its runbook_url names', () => {
    const rules = readFileSync(path.join(DIR, 'alerts.yml'), 'utf8');
    const tests = readFileSync(path.join(DIR, 'alerts.test.yml'), 'utf8');
    const runbook = readFileSync(path.join(ROOT, 'docs/runbook.md'), 'utf8');
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    expect(alerts).toHaveLength(10);
    for (const alert of alerts) {
      expect(tests, alert).toContain(`alertname: ${alert}\n`);
      expect(runbook, alert).toMatch(new RegExp(`^## ${alert}$`, 'm'));
      expect(rules, alert).toContain(`runbook_url: "docs/runbook.md#${alert.toLowerCase()}"`);
    }
  });
});
