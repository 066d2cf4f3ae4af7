/**
 * `fleet env` (also `fleet help env`): the environment variables every command reads, with their
 * defaults and meanings, from the config records. Reads no configuration itself, so it works
 * while a bad variable keeps every other command from starting.
 */
import type { Command } from 'commander';
import { renderEnvironmentHelp } from '../../config/config-docs.js';
import { CONFIG_RECORDS } from '../../config/env-schema.js';
import type { CliContext } from '../context.js';
import { printResult } from '../output.js';

export function registerEnv(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('env')
    .description('list the environment variables the fleet reads, with defaults (also: fleet help env)')
    .option('--json', 'print [{ name, default, doc }] as JSON')
    .addHelpText('after', `\n${renderEnvironmentHelp()}`)
    .action((opts: { json?: boolean }) =>
      run(async () => {
        const variables = CONFIG_RECORDS.map((record) => ({ name: record.name, default: record.defaultText, doc: record.doc }));
        printResult(ctx.io, Boolean(opts.json), variables, () => renderEnvironmentHelp().trimEnd());
        return 0;
      }),
    );
}
