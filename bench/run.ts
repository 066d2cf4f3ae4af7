/**
 * `npm run bench [-- name ...] [--skip name ...] [--repeats N]`: runs all benchmarks (or the named
 * ones; `--skip` leaves one out) one after the other, printing one JSON object per benchmark on
 * stdout and a table on stderr.
 */
import { BENCHMARKS } from './registry.js';
import { describeMachine } from './lib/machine.js';
import { formatTable, type BenchReport } from './lib/report.js';
import { fileCounts, scale, setFileCounts, setScale } from './lib/scale.js';

// `name...`, `--skip name` and `--repeats N` from argv.
function parseArgs(argv: readonly string[]): { names: string[]; repeats: number | undefined } {
  const names: string[] = [];
  const skipped = new Set<string>();
  let repeats: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--scale') {
      setScale(Number(argv[++i]));
    } else if (arg === '--files') {
      setFileCounts(argv[++i] ?? '');
    } else if (arg === '--repeats') {
      repeats = Number(argv[++i]);
      if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`--repeats: expected a whole number >= 1, got ${argv[i]}`);
    } else if (arg === '--skip') {
      const name = argv[++i] ?? '';
      if (!(name in BENCHMARKS)) throw new Error(`--skip: unknown benchmark ${JSON.stringify(name)}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
      skipped.add(name);
    } else if (arg.startsWith('-')) {
      throw new Error(`unknown option ${arg} (usage: npm run bench -- [${Object.keys(BENCHMARKS).join('|')} ...] [--skip NAME] [--repeats N] [--scale F] [--files N,M])`);
    } else if (!(arg in BENCHMARKS)) {
      throw new Error(`unknown benchmark ${JSON.stringify(arg)}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    } else names.push(arg);
  }
  return { names: (names.length > 0 ? names : Object.keys(BENCHMARKS)).filter((name) => !skipped.has(name)), repeats };
}

async function main(): Promise<number> {
  const { names, repeats } = parseArgs(process.argv.slice(2));
  const machine = describeMachine();
  let failed = 0;
  for (const name of names) {
    const log = (line: string) => process.stderr.write(`[${name}] ${line}\n`);
    const startedAt = new Date();
    try {
      const { default: benchmark } = await BENCHMARKS[name]!();
      const result = await benchmark({ repeats, log });
      const report: BenchReport = {
        ...result,
        // The runner's own fields win over anything a benchmark also reports.
        benchmark: name,
        command: `npm run bench -- ${name}${repeats ? ` --repeats ${repeats}` : ''}${scale() !== 1 ? ` --scale ${scale()}` : ''}${fileCounts() ? ` --files ${fileCounts()!.join(',')}` : ''}`,
        startedAt: startedAt.toISOString(),
        durationMs: Date.now() - startedAt.getTime(),
        machine,
      };
      process.stdout.write(`${JSON.stringify(report)}\n`);
      process.stderr.write(`${formatTable(report)}\n\n`);
      if ((report.violations ?? 0) > 0) {
        failed += 1;
        process.stderr.write(`[${name}] FAILED: ${report.violations} correctness violations (see the report)\n`);
      }
    } catch (error) {
      failed += 1;
      process.stderr.write(`[${name}] FAILED: ${(error as Error).stack ?? String(error)}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  },
);
