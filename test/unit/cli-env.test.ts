// `fleet env` and `fleet help env` list every variable from the config records, even while the
// environment holds a bad value (the one command that must still run then).
import { describe, expect, it } from 'vitest';
import { cliJson } from '../helpers/processes.js';
import { cliInProcess } from '../helpers/cli-in-process.js';
import { CONFIG_RECORDS } from '../../src/config/env-schema.js';

const fleet = cliInProcess;

describe('fleet env', () => {
  it('prints every variable with its default and meaning, with a bad variable in the environment', async () => {
    const result = await fleet(['env'], { FLEET_PREFIX: 'no-hash-tag' });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const record of CONFIG_RECORDS) {
      expect(result.stdout).toMatch(new RegExp(`^  ${record.name} +default: ${record.defaultText.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n      `, 'm'));
      expect(result.stdout).toContain(record.doc);
    }
  });

  it('prints the same records as JSON', async () => {
    const result = await fleet(['env', '--json']);
    expect(cliJson(result.stdout)).toEqual(CONFIG_RECORDS.map((r) => ({ name: r.name, default: r.defaultText, doc: r.doc })));
  });

  it('is the environment section of fleet help env, and fleet --help points to it', async () => {
    const help = await fleet(['help', 'env']);
    expect(help.code).toBe(0);
    for (const record of CONFIG_RECORDS) expect(help.stdout).toContain(`  ${record.name} `);
    const root = await fleet(['--help']);
    expect(root.code).toBe(0);
    expect(root.stdout).toContain('`fleet env` lists them');
  });
});
