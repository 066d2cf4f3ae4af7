/**
 * One output stream of a command: every chunk goes to `onChunk` as it arrives, and the first
 * `limit` bytes are kept for the result.
 */
export interface OutputCollector {
  push(chunk: Buffer): void;
  text(): string;
}

/** Output kept for a command's result by default: 1 MiB per stream. */
export const DEFAULT_OUTPUT_LIMIT = 1_048_576;

export function outputCollector(limit: number = DEFAULT_OUTPUT_LIMIT, onChunk?: (chunk: Buffer) => void): OutputCollector {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    push(chunk) {
      onChunk?.(chunk);
      if (size >= limit) return;
      const part = chunk.subarray(0, limit - size);
      chunks.push(part);
      size += part.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}
