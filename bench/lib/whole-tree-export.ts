/**
 * The Vercel `openTree` this branch replaced, kept for the vercel-persist benchmark's baseline:
 * `tar -czf` of the whole tree in the sandbox, the archive read back through the SDK and unpacked
 * into a fresh host directory, which persist then walks without a stat cache (every file read).
 *
 * The unpacking is the host's GNU tar (the tree is the benchmark's own), which is no slower than
 * the old extractor that trusted nothing: the baseline is, if anything, cheaper than main was.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Sandbox } from '@vercel/sandbox';
import type { TreeSource } from '../../src/providers/sandbox-provider.js';
import { readSandboxFile } from '../../src/providers/vercel/read-sandbox-file.js';
import { runScript } from '../../src/providers/vercel/run-script.js';
import { REMOVE_SCRIPT } from '../../src/providers/vercel/tree-scripts.js';
import type { VercelConnection } from '../../src/providers/vercel/vercel-connection.js';
import { FLEET_DIR } from '../../src/providers/vercel/vercel-paths.js';
import { parseVercelHandle } from '../../src/providers/vercel/vercel-handle.js';
import { removeTree } from '../../src/tree/remove-tree.js';

/** The old export script: the whole tree into `$1` (gzip, pax, hard links stored as files); tar's 1 = a file changed while read. */
const EXPORT_SCRIPT = ['mkdir -p workspace .fleet || exit 90', 'tar -czf "$1" --format=posix --hard-dereference -C workspace .'].join('\n');

/** `openTree` of a Vercel sandbox by a whole-tree export. */
export function wholeTreeExport(connection: VercelConnection): (handle: string, signal: AbortSignal) => Promise<TreeSource> {
  return async (handle, signal) => {
    const name = parseVercelHandle(handle)?.name;
    if (!name) throw new Error(`not a Vercel handle: ${handle}`);
    const sandbox = await Sandbox.get({ ...connection, name, signal });
    const archive = `${FLEET_DIR}/export-${randomUUID()}.tgz`;
    const dir = await mkdtemp(path.join(tmpdir(), 'fleet-bench-export-'));
    const release = () => removeTree(dir);
    try {
      await runScript(sandbox, { operation: 'openTree', script: EXPORT_SCRIPT, args: [archive], signal, okExitCodes: [0, 1] });
      const stream = await readSandboxFile(sandbox, archive, 'openTree', signal);
      await untar(stream.chunks, dir);
      await runScript(sandbox, { operation: 'openTree', script: REMOVE_SCRIPT, args: [archive], signal });
      return { path: dir, release };
    } catch (error) {
      await release();
      throw error;
    }
  };
}

// Unpacks a tar.gz stream into `dir` with the host's tar.
async function untar(chunks: AsyncIterable<Buffer>, dir: string): Promise<void> {
  const child = spawn('tar', ['-xzf', '-', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  await pipeline(Readable.from(chunks), child.stdin);
  const code = await exited;
  if (code !== 0) throw new Error(`bench: host tar exited with ${code}: ${stderr.slice(-500)}`);
}
