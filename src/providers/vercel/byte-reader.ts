/** Reads exact byte counts from an async stream of chunks (the tar reader's input). */
export class ByteReader {
  private readonly chunks: AsyncIterator<Buffer | Uint8Array | string>;
  private pending: Buffer = Buffer.alloc(0);
  private ended = false;

  constructor(source: AsyncIterable<Buffer | Uint8Array | string>) {
    this.chunks = source[Symbol.asyncIterator]();
  }

  /** Exactly `n` bytes; `null` when the stream ends before the first byte; throws when it ends midway. */
  async read(n: number): Promise<Buffer | null> {
    while (this.pending.length < n && (await this.pull()));
    if (this.pending.length === 0 && n > 0) return null;
    if (this.pending.length < n) throw new Error(`archive truncated: wanted ${n} bytes, stream ended after ${this.pending.length}`);
    const out = this.pending.subarray(0, n);
    this.pending = this.pending.subarray(n);
    return out;
  }

  /** Yields the next `n` bytes as they arrive (in chunks); throws when the stream ends first. */
  async *stream(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.pending.length === 0 && !(await this.pull())) throw new Error(`archive truncated: ${left} bytes of an entry missing`);
      const take = Math.min(left, this.pending.length);
      const out = this.pending.subarray(0, take);
      this.pending = this.pending.subarray(take);
      left -= take;
      yield out;
    }
  }

  /** Discards the next `n` bytes. */
  async skip(n: number): Promise<void> {
    for await (const _ of this.stream(n));
  }

  // Appends one more chunk; false at the end of the stream.
  private async pull(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.chunks.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    return true;
  }
}
