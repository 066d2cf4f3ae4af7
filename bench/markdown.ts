/**
 * Renders `npm run bench` output (JSON lines on stdin) as the Markdown tables of BENCHMARKS.md:
 * `npm run bench > results.jsonl && npx tsx bench/markdown.ts < results.jsonl`.
 */
import type { BenchReport } from './lib/report.js';
import type { Summary } from './lib/stats.js';

// One Markdown table of summaries.
function table(group: Readonly<Record<string, Summary>>): string {
  const rows = Object.entries(group).map(([name, s]) => `| ${name} | ${s.median} | ${s.p10} – ${s.p90} | ${s.min} – ${s.max} | ${s.unit} | ${s.n} |`);
  return ['| metric | median | p10 – p90 | min – max | unit | n |', '|---|---:|---:|---:|---|---:|', ...rows].join('\n');
}

// The Markdown section of one report.
function section(report: BenchReport): string {
  const m = report.machine;
  const lines = [
    `### ${report.benchmark}`,
    '',
    `\`${report.command}\` — ${report.startedAt}, ${(report.durationMs / 1000).toFixed(0)} s; parameters \`${JSON.stringify(report.params)}\``,
    '',
    `Machine: ${m.cpus.count} × ${m.cpus.model}, ${m.memory.totalMB} MB, ${m.os}, Node ${m.node}, ${m.redisServer.split(' sha=')[0]}, ${m.rsync}, tmp on ${m.tmpFilesystem}; load average at start ${m.loadavg.join(' / ')}`,
    '',
    table(report.metrics),
  ];
  if (report.profile && Object.keys(report.profile).length > 0) lines.push('', 'Profile:', '', table(report.profile));
  lines.push('', 'Targets:', '', ...report.targets.map((t) => `- ${t.met ? '**met**' : '**missed**'}: ${t.name}: ${t.value} ${t.op} ${t.threshold}`));
  if (report.notes.length > 0) lines.push('', ...report.notes.map((n) => `- ${n}`));
  return lines.join('\n');
}

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => (input += chunk));
process.stdin.on('end', () => {
  const reports = input.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as BenchReport);
  process.stdout.write(`${reports.map(section).join('\n\n')}\n`);
});
