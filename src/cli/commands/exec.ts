/**
 * `fleet exec <ws> -- <cmd...>`: run a command in a workspace's live tree through the same
 * resolver as the HTTP API (a gone sandbox is rebuilt first; never run twice). Output streams as
 * it arrives, also from a sandbox on another host; `-i` forwards this process's stdin.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Command } from 'commander';
import { UsageError } from '../../errors/usage-error.js';
import { MAX_STDIN_BYTES } from '../../hostops/host-op-args.js';
import { WorkspaceId, parsePayload } from '../../queues/index.js';
import type { CliContext } from '../context.js';
import { parseMs } from '../parse.js';
import { printResult } from '../output.js';
import { readStdin } from '../read-stdin.js';
import { withServices } from '../../app/with-services.js';
import { buildWorkspaceIo, WORKSPACE_IO_SERVICES } from '../../app/build-workspace-io.js';

/** Grace past the command's own deadline for its sandbox to be torn down. */
const TEARDOWN_GRACE_MS = 5_000;

// Writes chunks as text, keeping a character split between chunks whole.
function textSink(write: (text: string) => void) {
  const decoder = new StringDecoder('utf8');
  return { push: (chunk: Buffer) => write(decoder.write(chunk)), end: () => write(decoder.end()) };
}

export function registerExec(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('exec')
    .description('run a command in a workspace (cwd = live tree, allowlisted env, deadline); output streams as it arrives; exits with its code')
    .argument('<workspace>', 'workspace id')
    .argument('<command...>', 'command and arguments (after --)')
    .option('--timeout <ms>', 'deadline in milliseconds (default FLEET_EXEC_DEADLINE_MS)')
    .option('--cwd <path>', 'working directory relative to the tree root')
    .option('-i, --stdin', `forward this process's stdin to the command (read to its end first; at most ${MAX_STDIN_BYTES} bytes)`)
    .option('--json', 'print { exitCode, stdout, stderr, durationMs, timedOut } as JSON when it ends')
    .action((workspace: string, command: string[], opts: { timeout?: string; cwd?: string; json?: boolean; stdin?: boolean }) =>
      run(async () => {
        const workspaceId = parsePayload('workspace', WorkspaceId, workspace);
        if (command.length === 0) throw new UsageError('exec: missing command after --');
        const timeoutMs = parseMs('--timeout', opts.timeout, ctx.config().deadlines.execMs);
        const stdin = opts.stdin ? await readStdin('--stdin', MAX_STDIN_BYTES) : undefined;
        const json = Boolean(opts.json);
        return withServices(ctx, WORKSPACE_IO_SERVICES, async (services) => {
          const out = textSink(ctx.io.stdout);
          const err = textSink(ctx.io.stderr);
          const { source, ...result } = await buildWorkspaceIo(services).exec({
            workspaceId,
            cmd: command,
            ...(opts.cwd ? { cwd: opts.cwd } : {}),
            ...(stdin === undefined ? {} : { stdin }),
            timeoutMs,
            signal: AbortSignal.timeout(timeoutMs + TEARDOWN_GRACE_MS),
            ...(json ? {} : { onStdout: out.push, onStderr: err.push }),
          });
          if (json) printResult(ctx.io, true, { workspaceId, handle: source.kind === 'live' ? source.handle : '', ...result }, () => '');
          else {
            out.end();
            err.end();
            if (result.timedOut) ctx.io.stderr(`fleet: exec timed out after ${timeoutMs} ms\n`);
          }
          return result.exitCode ?? (result.timedOut ? 124 : 128);
        });
      }),
    );
}
