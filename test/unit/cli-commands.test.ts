// The CLI loads only the command it runs: each top-level command's module registers exactly that
// command, and a run that names no known command (help, a misspelling) or `completion` gets all.
import { describe, expect, it } from 'vitest';
import { buildProgram, commandsFor } from '../../src/cli/main.js';
import { createCliContext } from '../../src/cli/context.js';
import { FLEET_VERSION } from '../../src/version.js';
import { cliInProcess } from '../helpers/cli-in-process.js';

const ctx = () => createCliContext({ stdout: () => undefined, stderr: () => undefined }, {});

describe('the CLI loads the command it runs', () => {
  it('names the one command argv starts with, else every command', () => {
    const all = commandsFor([]);
    expect(all.length).toBeGreaterThan(20);
    expect(commandsFor(['status', '--json'])).toEqual(['status']);
    expect(commandsFor(['workspace', 'show', 'ws'])).toEqual(['workspace']);
    for (const argv of [['--help'], ['help', 'status'], ['statsu'], ['completion', 'bash'], ['constructor'], ['--version', 'status']]) expect(commandsFor(argv), argv.join(' ')).toEqual(all);
    expect(commandsFor(['--version'])).toEqual([]);
    expect(commandsFor(['-V'])).toEqual([]);
  });

  it('registers each command from its own module, and nothing else with it', async () => {
    for (const name of commandsFor([])) {
      const program = await buildProgram(ctx(), () => undefined, false, [name]);
      expect(program.commands.map((command) => command.name()), name).toEqual([name]);
    }
  });

  it('still prints the version, suggests the command a misspelt one meant, and completes every command', async () => {
    const version = await cliInProcess(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${FLEET_VERSION}\n` });
    const typo = await cliInProcess(['statsu']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('(Did you mean status?)');
    const completion = await cliInProcess(['completion', 'bash']);
    expect(completion.code).toBe(0);
    for (const name of commandsFor([])) expect(completion.stdout, name).toContain(name);
  });
});
