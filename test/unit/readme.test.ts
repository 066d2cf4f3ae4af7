// The README documents every configuration variable and every CLI command.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOCS, CONFIG_VARIABLES } from '../../src/config.js';
import { CONFIG_TABLES, renderConfigTable, tableMarkers } from '../../src/config/config-docs.js';
import { buildProgram } from '../../src/cli/main.js';
import { createCliContext } from '../../src/cli/context.js';
import { ROOT } from '../helpers/processes.js';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  for (const id of Object.keys(CONFIG_TABLES)) {
    it(`has the ${id} configuration table rendered from the config records, byte for byte (npm run -s docs:config)`, () => {
      const { start, end } = tableMarkers(id);
      const from = readme.indexOf(start);
      const to = readme.indexOf(end);
      expect(from).toBeGreaterThan(0);
      expect(readme.lastIndexOf(start)).toBe(from);
      expect(to).toBeGreaterThan(from);
      expect(readme.slice(from, to + end.length)).toBe(renderConfigTable(id));
    });
  }

  it('has a configuration row for every variable, with its documented default', () => {
    for (const variable of CONFIG_VARIABLES) {
      const [def] = CONFIG_DOCS[variable];
      expect(readme, variable).toContain(`| \`${variable}\` | \`${def}\` |`);
    }
  });

  it('documents every CLI command', () => {
    const program = buildProgram(createCliContext({ stdout: () => undefined, stderr: () => undefined }, {}), () => undefined);
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
