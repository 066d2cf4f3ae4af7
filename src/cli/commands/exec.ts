/** `fleet exec <ws> -- <cmd...>`: run a command in a workspace's live tree. */
import type { Command } from 'commander';
import { WorkspaceNotFoundError } from '../../errors/workspace-not-found-error.js';
import { UsageError } from '../../errors/usage-error.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { withServices } from '../../app/with-services.js';

export function registerExec(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('exec')
    .description('run a command in a workspace (cwd = live tree, allowlisted env, deadline); exits with its code')
    .argument('<workspace>', 'workspace id')
    .argument('<command...>', 'command and arguments (after --)')
    .option('--timeout <ms>', 'deadline in milliseconds (default FLEET_EXEC_DEADLINE_MS)')
    .option('--cwd <path>', 'working directory relative to the tree root')
    .option('--json', 'print { exitCode, stdout, stderr, durationMs, timedOut } as JSON')
    .action((workspace: string, command: string[], opts: { timeout?: string; cwd?: string; json?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        if (command.length === 0) throw new UsageError('exec: missing command after --');
        return withServices(ctx, ['addresses', 'providerFor'], async (services, config) => {
          const address = await services.addresses.get(workspaceId);
          if (!address) throw new WorkspaceNotFoundError(workspaceId);
          const timeoutMs = parseMs('--timeout', opts.timeout, config.deadlines.execMs);
          const json = Boolean(opts.json);
          // A sandbox on another host answers through its hostops queue: the output comes with the result.
          let streamed = false;
          const result = await services.providerFor(address).exec(address.handle, {
            cmd: command,
            ...(opts.cwd ? { cwd: opts.cwd } : {}),
            env: config.exec.env,
            timeoutMs,
            signal: AbortSignal.timeout(timeoutMs + 5_000),
            ...(json
              ? {}
              : {
                  onStdout: (c: Buffer) => ((streamed = true), ctx.io.stdout(c.toString())),
                  onStderr: (c: Buffer) => ((streamed = true), ctx.io.stderr(c.toString())),
                }),
          });
          if (!json && !streamed) {
            if (result.stdout) ctx.io.stdout(result.stdout);
            if (result.stderr) ctx.io.stderr(result.stderr);
          }
          if (json) printResult(ctx.io, true, { workspaceId, handle: address.handle, ...result }, () => '');
          else if (result.timedOut) ctx.io.stderr(`fleet: exec timed out after ${timeoutMs} ms\n`);
          return result.exitCode ?? (result.timedOut ? 124 : 128);
        });
      }),
    );
}
