/**
 * The framing of a shell helper's answer (lib/shell-helpers.ts), read chunk by chunk as a pipe
 * delivers it: the command's stdout (NUL-ended records, none of them empty: `find -printf '%y
 * %P\0'` writes at least the type), an empty record (`\0`) that ends it, then `<status>
 * <length>\n` and `length` bytes of the command's stderr. A chunk may end anywhere, a record or
 * the trailer included. Pure: no I/O.
 */

export interface HelperAnswer {
  /** The command's exit status. */
  readonly status: number;
  /** What it wrote to stderr. */
  readonly said: string;
}

/** What a chunk held: its part of the command's output (perhaps empty), and the answer once it is whole. */
export interface AnswerStep {
  readonly output: Buffer;
  readonly answer: HelperAnswer | null;
}

/** Bytes that are not an answer (a helper that says something else: the caller kills it). */
export class MalformedAnswer extends Error {}

const EMPTY = Buffer.alloc(0);
const TRAILER = /^(\d+) (\d+)$/;

export class AnswerReader {
  /** Bytes of the record being read, across chunks: a `\0` with none before it ends the output. */
  #recordBytes = 0;
  /** After the output: the trailer read so far. */
  #trailer: Buffer | null = null;
  #done = false;

  push(chunk: Buffer): AnswerStep {
    if (this.#done) throw new MalformedAnswer('bytes after the answer');
    if (this.#trailer !== null) {
      this.#trailer = Buffer.concat([this.#trailer, chunk]);
      return { output: EMPTY, answer: this.#answer() };
    }
    let carried = this.#recordBytes;
    let start = 0;
    for (let at = chunk.indexOf(0); at >= 0; at = chunk.indexOf(0, at + 1)) {
      if (carried + at - start === 0) {
        this.#trailer = chunk.subarray(at + 1);
        return { output: chunk.subarray(0, at), answer: this.#answer() };
      }
      carried = 0;
      start = at + 1;
    }
    this.#recordBytes = carried + chunk.length - start;
    return { output: chunk, answer: null };
  }

  // The answer once the whole trailer is in; null before.
  #answer(): HelperAnswer | null {
    const trailer = this.#trailer!;
    const line = trailer.indexOf(0x0a);
    if (line < 0) {
      if (trailer.length > 64) throw new MalformedAnswer(`no status line in ${JSON.stringify(trailer.subarray(0, 64).toString())}`);
      return null;
    }
    const match = TRAILER.exec(trailer.subarray(0, line).toString('latin1'));
    if (!match) throw new MalformedAnswer(`status line ${JSON.stringify(trailer.subarray(0, Math.min(line, 200)).toString())}`);
    const length = Number(match[2]);
    const rest = trailer.length - line - 1;
    if (rest < length) return null;
    if (rest > length) throw new MalformedAnswer('bytes after the answer');
    this.#done = true;
    return { status: Number(match[1]), said: trailer.subarray(line + 1).toString() };
  }
}
