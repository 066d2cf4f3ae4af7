/** `fleet completion bash|zsh`: print a completion script (e.g. `source <(fleet completion bash)`). */
import type { Command } from 'commander';
import { UsageError } from '../../errors/usage-error.js';
import type { CliContext } from '../context.js';
import { SHELLS, completionScript, type Shell } from '../completion-script.js';
import { printResult } from '../output.js';

export function registerCompletion(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(fleet completion bash)')
    .argument('<shell>', SHELLS.join(' | '))
    .option('--json', 'print { shell, script } as JSON')
    .action((shell: string, opts: { json?: boolean }) =>
      run(async () => {
        if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`<shell>: expected one of ${SHELLS.join(', ')}, got ${JSON.stringify(shell)}`);
        const script = completionScript(program, shell as Shell);
        if (opts.json) printResult(ctx.io, true, { shell, script }, () => '');
        else ctx.io.stdout(script);
        return 0;
      }),
    );
}
