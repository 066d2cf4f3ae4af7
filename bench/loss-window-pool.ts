/**
 * `npx tsx bench/loss-window-pool.ts <result.json>...`: the host kill loss windows of several
 * `bench -- loss-window` result files pooled per provider (bench/lib/loss-window-pool.ts), as JSON.
 * E.g. the README's 100,000-file Vercel figure:
 * `npx tsx bench/loss-window-pool.ts bench/results/loss-window-100000-{s-listed,w2,ab}-vercel.json`.
 */
import { readFile } from 'node:fs/promises';
import { poolLossWindows } from './lib/loss-window-pool.js';

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: npx tsx bench/loss-window-pool.ts <loss-window result.json>...');
const reports = await Promise.all(
  files.map(async (file) => {
    const report = JSON.parse(await readFile(file, 'utf8')) as Parameters<typeof poolLossWindows>[0][number];
    if (report.metrics === undefined || report.params === undefined) throw new Error(`${file}: not a loss-window result (no metrics or params)`);
    return report;
  }),
);
console.log(JSON.stringify(poolLossWindows(reports), null, 2));
