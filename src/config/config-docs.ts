/**
 * The documentation derived from the config records: the README's configuration table (checked
 * byte for byte by test/unit/readme.test.ts; `npm run -s docs:config` rewrites it) and the
 * environment section of `fleet env`.
 */
import { CONFIG_RECORDS, type ConfigVariableName } from './env-schema.js';

/** Documentation rows for the README table: variable, default, meaning. */
export const CONFIG_DOCS: Readonly<Record<ConfigVariableName, readonly [string, string]>> = Object.freeze(
  Object.fromEntries(CONFIG_RECORDS.map((record) => [record.name, Object.freeze([record.defaultText, record.doc] as const)])) as Record<ConfigVariableName, readonly [string, string]>,
);

/** The markers around the generated table in README.md. */
export const CONFIG_TABLE_START = '<!-- config-table: generated from src/config/config-shape.ts by `npm run -s docs:config` -->';
export const CONFIG_TABLE_END = '<!-- /config-table -->';

/** The README's configuration table, markers included. */
export function renderConfigTable(): string {
  const rows = CONFIG_RECORDS.map((record) => `| \`${record.name}\` | \`${record.defaultText}\` | ${record.doc} |`);
  // Blank lines around the table: no markdown renderer may read a marker as a table row.
  return [CONFIG_TABLE_START, '', '| variable | default | meaning |', '|---|---|---|', ...rows, '', CONFIG_TABLE_END].join('\n');
}

/** `text` with its configuration table replaced by the rendered one; throws without the markers. */
export function withConfigTable(text: string): string {
  const start = text.indexOf(CONFIG_TABLE_START);
  const end = text.indexOf(CONFIG_TABLE_END);
  if (start < 0 || end < start) throw new Error(`no configuration table between ${CONFIG_TABLE_START} and ${CONFIG_TABLE_END}`);
  return text.slice(0, start) + renderConfigTable() + text.slice(end + CONFIG_TABLE_END.length);
}

/** The variables for a terminal: name and default, then the meaning indented below. */
export function renderEnvironmentHelp(): string {
  const width = Math.max(...CONFIG_RECORDS.map((record) => record.name.length));
  const lines = CONFIG_RECORDS.map((record) => `  ${record.name.padEnd(width)}  default: ${record.defaultText}\n      ${record.doc}`);
  return `Environment (read once at start-up; a bad value fails with one line naming the variable):\n\n${lines.join('\n')}\n`;
}
