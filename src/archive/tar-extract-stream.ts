/**
 * One host `tar -x` fed from this process: a TarWriter whose chunks go through a pipe into the
 * tar's stdin, the tar extracting into a directory this process holds open (its fd 3). A restore
 * runs one or more of these side by side (extract-revision.ts); this file is one of them.
 *
 * A chunk is written again only once tar's stdin has handed it to the kernel. The pipe passes
 * chunks on in order: at a drain of tar's stdin, every byte that has left the PassThrough (all
 * written to it, less what it still holds) is in the kernel, and the chunks wholly within them are
 * released. (A `data` listener would tell the same, but kept the PassThrough flowing into nothing
 * once tar had gone.)
 *
 * The writer takes one entry at a time: `add` hands it an entry only while no earlier chunk waits
 * for the pipe (`busy`), and `idle` is that wait.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { runCommand, type CommandResult } from '../lib/run-command.js';
import { TarWriter } from './tar-writer.js';

/** The host's tar exited while entries were still being written (its exit status says why). */
export class TarEndedEarly extends Error {}

export interface TarExtractStreamOptions {
  /** The directory extracted into, held open by this process. */
  readonly destFd: number;
  /** Entries keep the header's owner (`--same-owner`); else tar's own user owns them. */
  readonly sameOwner: boolean;
  readonly systemPath: string;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

export class TarExtractStream {
  /** Add entries only while not `busy`. */
  readonly writer: TarWriter;
  /** The tar's result once it exited. */
  readonly done: Promise<CommandResult>;
  /** Rejects with TarEndedEarly once the tar has exited (never resolves). */
  readonly ended: Promise<never>;
  readonly #input = new PassThrough();
  readonly #inFlight: { readonly end: number; readonly release: () => void }[] = [];
  #writtenBytes = 0;
  #wait: Promise<void> | null = null;

  constructor(options: TarExtractStreamOptions) {
    const input = this.#input;
    this.done = runCommand(
      'tar',
      ['-x', '-f', '-', '-C', '/proc/self/fd/3', '--preserve-permissions', '--numeric-owner', options.sameOwner ? '--same-owner' : '--no-same-owner'],
      {
        env: { PATH: options.systemPath, LC_ALL: 'C' },
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        stdin: input,
        fds: [options.destFd],
        onStdinDrained: () => {
          // Bytes a chunk holds are counted on both sides of the PassThrough while it passes: the count errs towards holding chunks back.
          const handed = this.#writtenBytes - input.readableLength - input.writableLength;
          while (this.#inFlight.length > 0 && this.#inFlight[0]!.end <= handed) this.#inFlight.shift()!.release();
        },
      },
    );
    this.ended = this.done.then(() => Promise.reject(new TarEndedEarly()));
    this.ended.catch(() => undefined);
    this.writer = new TarWriter(async (chunk, release) => {
      this.#writtenBytes += chunk.length;
      this.#inFlight.push({ end: this.#writtenBytes, release });
      if (!input.write(chunk)) await Promise.race([once(input, 'drain'), this.ended]);
    });
  }

  /** True while a chunk handed to the pipe waits for it (the writer takes no entry meanwhile). */
  get busy(): boolean {
    return this.#wait !== null;
  }

  /** Settles when the stream is no longer busy; rejects if the chunk could not be handed on (the tar ended). */
  idle(): Promise<void> {
    return this.#wait ?? Promise.resolve();
  }

  /** Hands `write` (one call of the writer) to the stream, remembering its wait if it made one. */
  add(write: (writer: TarWriter) => Promise<void> | undefined): void {
    if (this.#wait !== null) throw new Error('tar stream: an entry added while a chunk waits');
    const wrote = write(this.writer);
    if (wrote === undefined) return;
    const wait: Promise<void> = wrote.then(() => {
      if (this.#wait === wait) this.#wait = null;
    });
    wait.catch(() => undefined);
    this.#wait = wait;
  }

  /** Closes the archive once the last chunk was handed on, and the pipe after it. */
  async end(): Promise<void> {
    await this.idle();
    await this.writer.end();
    this.#input.end();
  }

  /** Stops feeding the tar (after a failure; the caller's signal ends the tar itself). */
  destroy(): void {
    this.#input.destroy();
  }
}
