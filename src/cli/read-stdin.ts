/** This process's stdin read to its end, refused past `maxBytes` (nothing is run then). */
import { UsageError } from '../errors/usage-error.js';

export async function readStdin(flag: string, maxBytes: number, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > maxBytes) throw new UsageError(`${flag}: stdin is larger than ${maxBytes} bytes (put larger input in a file of the workspace)`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
