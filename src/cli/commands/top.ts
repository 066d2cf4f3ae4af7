/** `fleet top [--once] [--json] [--interval ms]`: a live view of queues, persist lag and workers. */
import type { Command } from 'commander';
import { fleetKeys } from '../../keys.js';
import { closeRedis, createRedis } from '../../redis.js';
import type { CliContext } from '../context.js';
import { printResult } from '../output.js';
import { parseMs } from '../parse.js';
import { readTopSnapshot, renderTopFrame } from '../top-frame.js';

// Clears the terminal and homes the cursor before each live frame.
export const CLEAR_SCREEN = '\x1b[H\x1b[2J';

export function registerTop(program: Command, ctx: CliContext, run: (action: () => Promise<number>) => Promise<void>): void {
  program
    .command('top')
    .description('live view of queues, persist lag and workers (q or Ctrl-C quits; plain frames, one after another, off a terminal)')
    .option('--once', 'print one frame and exit')
    .option('--interval <ms>', 'refresh interval', '2000')
    .option('--json', 'print one snapshot as JSON and exit')
    .action((opts: { once?: boolean; interval: string; json?: boolean }) =>
      run(async () => {
        const intervalMs = parseMs('--interval', opts.interval, 2_000);
        const config = await ctx.connectedConfig();
        const redis = createRedis({ target: config.redis, role: 'client', commandTimeoutMs: config.redis.commandTimeoutMs, name: 'fleet-top' });
        const keys = fleetKeys(config.redis.prefix, config.redis.keyLayout);
        try {
          if (opts.json || opts.once) {
            const snapshot = await readTopSnapshot(redis, keys, config);
            printResult(ctx.io, Boolean(opts.json), snapshot, () => renderTopFrame(snapshot));
            return 0;
          }
          let stopped = false;
          let wake: () => void = () => undefined;
          const stop = () => {
            stopped = true;
            wake();
          };
          // `fleet top | head`: the reader went away; stop quietly instead of dying of EPIPE.
          const onStdoutError = (error: NodeJS.ErrnoException) => {
            if (error.code === 'EPIPE') stop();
          };
          // On a terminal a frame replaces the last one; into a pipe or a file, frames follow each other.
          const tty = process.stdout.isTTY === true;
          process.stdout.on('error', onStdoutError);
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
          const stopListening = process.stdin.isTTY === true ? quitOnKey(stop) : () => undefined;
          try {
            while (!stopped) {
              const frame = await readTopSnapshot(redis, keys, config).then(renderTopFrame, (error: unknown) => `fleet top: ${(error as Error).message} (retrying)`);
              if (stopped) break;
              ctx.io.stdout(tty ? `${CLEAR_SCREEN}${frame}\n` : `${frame}\n\n`);
              await new Promise<void>((resolve) => {
                wake = resolve;
                setTimeout(resolve, intervalMs).unref();
              });
            }
          } finally {
            stopListening();
            process.stdout.off('error', onStdoutError);
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
          }
          return 0;
        } finally {
          await closeRedis(redis);
        }
      }),
    );
}

/**
 * Reads single keys from the terminal (raw mode): `q`, `Q` or Ctrl-C calls `stop`. Returns the
 * function that gives the terminal back as it was.
 */
function quitOnKey(stop: () => void): () => void {
  const stdin = process.stdin;
  const onData = (data: Buffer) => {
    if (data.includes(0x71) || data.includes(0x51) || data.includes(0x03)) stop();
  };
  stdin.setRawMode(true);
  stdin.on('data', onData);
  stdin.resume();
  return () => {
    stdin.off('data', onData);
    stdin.setRawMode(false);
    stdin.pause();
  };
}
