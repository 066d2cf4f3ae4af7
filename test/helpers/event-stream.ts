// Reads a streamed HTTP answer (NDJSON lines or SSE messages) as it arrives: a test waits for the
// event it needs (the stream answers before the command ends), then reads the rest.

export interface StreamReader<T> {
  /** The next event that satisfies `match` (earlier ones are kept in `seen`); throws at the end of the stream. */
  until(match: (event: T) => boolean): Promise<T>;
  /** Every event up to the end of the stream. */
  rest(): Promise<T[]>;
  /** Every event read so far. */
  readonly seen: T[];
  cancel(): Promise<void>;
}

/** Splits the body of `response` into NDJSON events (`sse: false`) or SSE message data (`sse: true`, comments skipped). */
export function readEvents<T = Record<string, any>>(response: Response, { sse = false } = {}): StreamReader<T> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const seen: T[] = [];
  let buffer = '';
  let index = 0;
  const separator = sse ? '\n\n' : '\n';
  // Reads until one more event is buffered; false at the end of the stream.
  const more = async (): Promise<boolean> => {
    for (;;) {
      const at = buffer.indexOf(separator);
      if (at >= 0) {
        const part = buffer.slice(0, at);
        buffer = buffer.slice(at + separator.length);
        if (!sse) seen.push(JSON.parse(part) as T);
        else {
          const data = part.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
          if (data.length === 0) continue;
          const event = JSON.parse(data.join('\n')) as Record<string, unknown>;
          const id = /^id: (.*)$/m.exec(part)?.[1];
          const name = /^event: (.*)$/m.exec(part)?.[1];
          seen.push({ ...event, ...(id === undefined ? {} : { sseId: id }), ...(name === undefined ? {} : { sseEvent: name }) } as T);
        }
        return true;
      }
      const { done, value } = await reader.read();
      if (done) return false;
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return {
    seen,
    async until(match) {
      for (;;) {
        while (index < seen.length) {
          const event = seen[index++]!;
          if (match(event)) return event;
        }
        if (!(await more())) throw new Error(`the stream ended before the event waited for; read: ${JSON.stringify(seen).slice(0, 2000)}`);
      }
    },
    async rest() {
      while (await more());
      index = seen.length;
      return seen;
    },
    cancel: () => reader.cancel(),
  };
}
