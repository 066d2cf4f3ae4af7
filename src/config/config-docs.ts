/**
 * The documentation derived from the config records: the configuration tables of README.md and
 * docs/operator-surfaces.md (checked byte for byte by test/unit/readme.test.ts; `npm run -s
 * docs:config` rewrites them) and the environment section of `fleet env`.
 */
import type { ConfigVariable } from './config-variable.js';
import { variablesOf } from './compile-shape.js';
import { CONFIG_SHAPE } from './config-shape.js';
import { CONFIG_RECORDS, type ConfigVariableName } from './env-schema.js';

type Documented = Pick<ConfigVariable<string, unknown, unknown>, 'name' | 'defaultText' | 'doc'>;

/** Documentation rows for the README table: variable, default, meaning. */
export const CONFIG_DOCS: Readonly<Record<ConfigVariableName, readonly [string, string]>> = Object.freeze(
  Object.fromEntries(CONFIG_RECORDS.map((record) => [record.name, Object.freeze([record.defaultText, record.doc] as const)])) as Record<ConfigVariableName, readonly [string, string]>,
);

/** The README's generated tables by id: every variable, and the web process's own (HTTP API, Bull Board). */
export const CONFIG_TABLES: Readonly<Record<string, readonly Documented[]>> = Object.freeze({
  all: CONFIG_RECORDS,
  web: [...variablesOf(CONFIG_SHAPE.http), ...variablesOf(CONFIG_SHAPE.admin)],
});

/** The markers around a generated table in README.md. */
export const tableMarkers = (id: string) => ({
  start: `<!-- config-table ${id}: generated from src/config/config-shape.ts by \`npm run -s docs:config\` -->`,
  end: `<!-- /config-table ${id} -->`,
});

/** A generated README table, markers included. */
export function renderConfigTable(id: string): string {
  const records = CONFIG_TABLES[id];
  if (records === undefined) throw new Error(`no config table ${id}`);
  const { start, end } = tableMarkers(id);
  const rows = records.map((record) => `| \`${record.name}\` | \`${record.defaultText}\` | ${record.doc} |`);
  // Blank lines around the table: no markdown renderer may read a marker as a table row.
  return [start, '', '| variable | default | meaning |', '|---|---|---|', ...rows, '', end].join('\n');
}

/** The files holding generated tables (paths from the repository root) and the tables each holds. */
export const CONFIG_TABLE_DOCUMENTS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'README.md': ['all', 'web'],
  'docs/operator-surfaces.md': ['web'],
});

/** `text` with the tables `ids` replaced by their rendering; throws when one has no markers. */
export function withConfigTables(text: string, ids: readonly string[]): string {
  let out = text;
  for (const id of ids) {
    const { start, end } = tableMarkers(id);
    const from = out.indexOf(start);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`no config table between ${start} and ${end}`);
    out = out.slice(0, from) + renderConfigTable(id) + out.slice(to + end.length);
  }
  return out;
}

/** The variables for a terminal: name and default, then the meaning indented below. */
export function renderEnvironmentHelp(): string {
  const width = Math.max(...CONFIG_RECORDS.map((record) => record.name.length));
  const lines = CONFIG_RECORDS.map((record) => `  ${record.name.padEnd(width)}  default: ${record.defaultText}\n      ${record.doc}`);
  return `Environment (read once at start-up; a bad value fails with one line naming the variable):\n\n${lines.join('\n')}\n`;
}
