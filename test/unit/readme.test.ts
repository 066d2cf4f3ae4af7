// The README documents every configuration variable and every CLI command.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS, CONFIG_VARIABLES } from '../../src/config.js';
import { CONFIG_TABLE_DOCUMENTS, CONFIG_TABLES, renderConfigTable, tableMarkers } from '../../src/config/config-docs.js';
import { buildProgram } from '../../src/cli/main.js';
import { createCliContext } from '../../src/cli/context.js';
import { ROOT } from '../helpers/processes.js';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  for (const [file, ids] of Object.entries(CONFIG_TABLE_DOCUMENTS)) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const id of ids) {
      it(`${file} has the ${id} configuration table rendered from the config records, byte for byte (npm run -s docs:config)`, () => {
        const { start, end } = tableMarkers(id);
        const from = text.indexOf(start);
        const to = text.indexOf(end);
        expect(from).toBeGreaterThan(0);
        expect(text.lastIndexOf(start)).toBe(from);
        expect(to).toBeGreaterThan(from);
        expect(text.slice(from, to + end.length)).toBe(renderConfigTable(id));
      });
    }
  }

  it('renders every table some document holds', () => {
    expect(new Set(Object.values(CONFIG_TABLE_DOCUMENTS).flat())).toEqual(new Set(Object.keys(CONFIG_TABLES)));
  });

  it('has a configuration row for every variable, with its documented default', () => {
    for (const variable of CONFIG_VARIABLES) {
      const [def] = CONFIG_DOCS[variable];
      expect(readme, variable).toContain(`| \`${variable}\` | \`${def}\` |`);
    }
  });

  it('documents every CLI command', async () => {
    const program = await buildProgram(createCliContext({ stdout: () => undefined, stderr: () => undefined }, {}), () => undefined);
    for (const command of program.commands) expect(readme, command.name()).toContain(`fleet ${command.name()}`);
  });

  it('opens with a quick start that installs, starts and tests', () => {
    const start = readme.indexOf('## Quick start');
    expect(start).toBeGreaterThan(0);
    const quick = readme.slice(start, start + 1200);
    expect(quick).toContain('npm install && npm start');
    expect(quick).toContain('npm install && npm test');
  });
});
