// A write(2) stalled mid-copy on purpose (test/fixtures/stalled-write.py): the file half-written
// with its inode lock held until `release()`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';

const SCRIPT = path.join(import.meta.dirname, '../fixtures/stalled-write.py');

export interface StalledWriter {
  /** Lets the write finish; resolves once it has. */
  release(): Promise<void>;
  kill(): void;
}

/** Starts rewriting `file` (a whole number of pages) with `byte` over its size; resolves once the write is stalled half-way. */
export async function stallWrite(file: string, byte: string): Promise<StalledWriter> {
  const child: ChildProcessWithoutNullStreams = spawn('python3', [SCRIPT, file, byte]);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (expected: string) => {
    const line = await lines.next();
    if (line.done || line.value !== expected) throw new Error(`stalled-write.py: expected "${expected}", got ${line.done ? 'its exit' : JSON.stringify(line.value)}; stderr: ${stderr}`);
  };
  await next('stalled');
  return {
    async release() {
      child.stdin.write('go\n');
      await next('written');
    },
    kill: () => void child.kill('SIGKILL'),
  };
}
