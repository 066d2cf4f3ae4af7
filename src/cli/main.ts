/**
 * `fleet`: the command line. Exit codes: 0 success, 1 failure, 2 usage error. Errors go to
 * stderr as one line; results to stdout (`--json` for scripts).
 */
import { Command, CommanderError } from 'commander';
import { UsageError } from '../errors/usage-error.js';
import { PayloadInvalidError } from '../errors/payload-invalid-error.js';
import { RedisUnavailableError } from '../errors/redis-unavailable-error.js';
import { FLEET_VERSION } from '../version.js';
import { createCliContext, type CliContext } from './context.js';
import { errorLine, printFailure, processIO, type CliIO } from './output.js';
import { registerEnqueue } from './commands/enqueue.js';
import { registerStatus } from './commands/status.js';
import { registerUp } from './commands/up.js';
import { registerWorker } from './commands/worker.js';
import { registerExec } from './commands/exec.js';
import { registerPersist } from './commands/persist.js';
import { registerHistory } from './commands/history.js';
import { registerVerify } from './commands/verify.js';
import { registerProvision } from './commands/provision.js';
import { registerWorkspace } from './commands/workspace.js';
import { registerBake } from './commands/bake.js';
import { registerBase } from './commands/base.js';
import { registerRollback } from './commands/rollback.js';
import { registerGc } from './commands/gc.js';
import { registerWeb } from './commands/web.js';
import { registerQueues } from './commands/queues.js';
import { registerTop } from './commands/top.js';
import { registerCompletion } from './commands/completion.js';
import { registerEnv } from './commands/env.js';
import { registerBackfill } from './commands/backfill.js';
import { registerExport } from './commands/export.js';
import { registerArchive } from './commands/archive.js';
import { registerTurn } from './commands/turn.js';
import { registerFiles } from './commands/files.js';
import { registerJobs } from './commands/jobs.js';
import { registerRedis } from './commands/redis.js';
import { HELP_EXAMPLES } from './help-examples.js';

export type Register = (program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>) => void;

const COMMANDS: Register[] = [
  registerUp,
  registerWorker,
  registerStatus,
  registerEnqueue,
  registerProvision,
  registerExec,
  registerPersist,
  registerHistory,
  registerVerify,
  registerWorkspace,
  registerBake,
  registerBase,
  registerRollback,
  registerGc,
  registerWeb,
  registerQueues,
  registerJobs,
  registerRedis,
  registerTop,
  registerCompletion,
  registerEnv,
  registerBackfill,
  registerExport,
  registerArchive,
  registerTurn,
  registerFiles,
];

/** Builds the program; `run` records each action's exit code (`json`: failures also as the `--json` envelope). */
export function buildProgram(ctx: CliContext, onExit: (code: number) => void, json = false): Command {
  const program = new Command('fleet')
    .description('sandbox-fleet: keep AI-agent sandbox workspaces alive and durable')
    .version(FLEET_VERSION, '-V, --version')
    .showSuggestionAfterError(true)
    .addHelpText('after', '\nEnvironment: REDIS_URL and the FLEET_* variables configure every command; `fleet env` lists them with defaults.')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.io.stdout(text),
      writeErr: (text) => ctx.io.stderr(text),
      outputError: () => undefined,
    });
  const run = async (action: () => Promise<number>) => {
    try {
      onExit(await action());
    } catch (error) {
      const typed = typedRedisFailure(error, ctx);
      ctx.io.stderr(`${errorLine(typed)}\n`);
      if (json) printFailure(ctx.io, typed);
      // A malformed flag value or payload given on the command line is a usage error.
      onExit(error instanceof UsageError || error instanceof PayloadInvalidError ? 2 : 1);
    }
  };
  for (const register of COMMANDS) register(program, ctx, run);
  for (const command of program.commands) {
    const examples = HELP_EXAMPLES[command.name()];
    if (examples) command.addHelpText('after', `\nExamples:\n${examples.map((line) => `  ${line}`).join('\n')}`);
  }
  const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
  for (const command of all(program).slice(1)) command.exitOverride().configureOutput({ outputError: () => undefined, writeOut: (t) => ctx.io.stdout(t), writeErr: (t) => ctx.io.stderr(t) });
  return program;
}

/** Runs the CLI and resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIO = processIO, env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  const ctx = createCliContext(io, env);
  let code = 0;
  const json = argv.includes('--json');
  const program = buildProgram(
    ctx,
    (c) => {
      code = c;
    },
    json,
  );
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 2;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      const message = error.message.replace(/^error: /, '');
      io.stderr(`fleet: ${message}\n`);
      if (json) printFailure(io, new UsageError(message));
      return 2;
    }
    const typed = typedRedisFailure(error, ctx);
    io.stderr(`${errorLine(typed)}\n`);
    if (json) printFailure(io, typed);
    return 1;
  }
}

// A Redis refusal named as such (Redis, its address, the refusal code) instead of raw reply text.
function typedRedisFailure(error: unknown, ctx: CliContext): unknown {
  return RedisUnavailableError.from(error, ctx.redisAddress() ?? 'the configured address') ?? error;
}
