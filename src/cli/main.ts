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
import { HELP_EXAMPLES } from './help-examples.js';

export type Register = (program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>) => void;

// Each top-level command's module (named after the command), in the order help lists them. A
// command's imports are most of the CLI's start-up: only the one named is loaded (`fleet status`
// loaded every command's before, about 1 s more of a 2-core machine's time); help, a misspelt
// command (its suggestion) and `completion` (which lists them all) load every one.
const COMMANDS: Readonly<Record<string, () => Promise<Register>>> = Object.freeze({
  up: async () => (await import('./commands/up.js')).registerUp,
  worker: async () => (await import('./commands/worker.js')).registerWorker,
  status: async () => (await import('./commands/status.js')).registerStatus,
  enqueue: async () => (await import('./commands/enqueue.js')).registerEnqueue,
  provision: async () => (await import('./commands/provision.js')).registerProvision,
  exec: async () => (await import('./commands/exec.js')).registerExec,
  persist: async () => (await import('./commands/persist.js')).registerPersist,
  history: async () => (await import('./commands/history.js')).registerHistory,
  verify: async () => (await import('./commands/verify.js')).registerVerify,
  workspace: async () => (await import('./commands/workspace.js')).registerWorkspace,
  bake: async () => (await import('./commands/bake.js')).registerBake,
  base: async () => (await import('./commands/base.js')).registerBase,
  rollback: async () => (await import('./commands/rollback.js')).registerRollback,
  gc: async () => (await import('./commands/gc.js')).registerGc,
  web: async () => (await import('./commands/web.js')).registerWeb,
  queues: async () => (await import('./commands/queues.js')).registerQueues,
  jobs: async () => (await import('./commands/jobs.js')).registerJobs,
  redis: async () => (await import('./commands/redis.js')).registerRedis,
  top: async () => (await import('./commands/top.js')).registerTop,
  completion: async () => (await import('./commands/completion.js')).registerCompletion,
  env: async () => (await import('./commands/env.js')).registerEnv,
  backfill: async () => (await import('./commands/backfill.js')).registerBackfill,
  export: async () => (await import('./commands/export.js')).registerExport,
  archive: async () => (await import('./commands/archive.js')).registerArchive,
  turn: async () => (await import('./commands/turn.js')).registerTurn,
  files: async () => (await import('./commands/files.js')).registerFiles,
});
const LOADS_ALL: ReadonlySet<string> = new Set(['completion']);

/** The top-level commands a run of `argv` needs: none for the version, the one it names, else all of them. */
export function commandsFor(argv: readonly string[]): readonly string[] {
  const named = argv[0];
  if (argv.length === 1 && (named === '--version' || named === '-V')) return [];
  if (named !== undefined && Object.hasOwn(COMMANDS, named) && !LOADS_ALL.has(named)) return [named];
  return Object.keys(COMMANDS);
}

/**
 * Builds the program with `commands` (every one by default); `run` records each action's exit
 * code (`json`: failures also as the `--json` envelope).
 */
export async function buildProgram(ctx: CliContext, onExit: (code: number) => void, json = false, commands: readonly string[] = Object.keys(COMMANDS)): Promise<Command> {
  const registers = await Promise.all(commands.map((name) => COMMANDS[name]!()));
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
  for (const register of registers) register(program, ctx, run);
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
  const program = await buildProgram(
    ctx,
    (c) => {
      code = c;
    },
    json,
    commandsFor(argv),
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
