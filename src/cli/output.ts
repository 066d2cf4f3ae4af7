/**
 * CLI output: results on stdout (human text, or with `--json` one envelope for every command:
 * `{"ok":true,"data":…}`, and on failure `{"ok":false,"error":{"code","message","retryable","context"}}`),
 * diagnostics on stderr, and errors as one line there too.
 */
import { isFleetError } from '../errors/fleet-error.js';
import { toFailureWire } from '../errors/failure-wire.js';

export interface CliIO {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export const processIO: CliIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Prints `data` in the JSON envelope when `json`, else the human rendering. */
export function printResult(io: CliIO, json: boolean, data: unknown, human: () => string): void {
  io.stdout(json ? `${JSON.stringify({ ok: true, data })}\n` : `${human()}\n`);
}

/** The failure envelope of `--json` (its one line on stderr is printed as well). */
export function printFailure(io: CliIO, error: unknown): void {
  const { code, message, retryable, context } = toFailureWire(error);
  io.stdout(`${JSON.stringify({ ok: false, error: { code, message, retryable, context } })}\n`);
}

/** One-line rendering of an error for stderr. */
export function errorLine(error: unknown): string {
  if (isFleetError(error)) return `fleet: ${error.code}: ${error.message.replace(/\s*\n\s*/g, ' ')}`;
  const message = error instanceof Error ? error.message : String(error);
  return `fleet: ${message.replace(/\s*\n\s*/g, ' ')}`;
}

/** Renders rows as an aligned text table. */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((cell, i) => (cell ?? '').padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
