import { runCommand } from '../../lib/run-command.js';
import { ProviderBusyError, ProviderPermanentError } from '../provider-errors.js';
import { anySignal } from '../../lib/any-signal.js';

/** The SDK uploads from memory (tar-stream into one buffer), so the archive must fit there too. */
export const MAX_ARCHIVE_BYTES = 1024 ** 3;
/** A local tar of a workspace that takes longer than this is stuck, not slow. */
export const PACK_TIMEOUT_MS = 10 * 60_000;
// What runCommand keeps of tar's output as text: its stderr for the error (the archive is collected here).
const MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * Archives a local directory (gzip, pax format, symlinks as symlinks, hard links as files) for
 * `importTree`. Runs the host's `tar`, which the fleet requires anyway. A deadline or the caller's
 * signal is busy; a failing tar or an archive over 1 GiB is permanent.
 */
export async function packTree(dir: string, signal: AbortSignal, systemPath: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const tooBig = new AbortController();
  const result = await runCommand('tar', ['-czf', '-', '--format=posix', '--hard-dereference', '-C', dir, '.'], {
    env: { PATH: systemPath },
    timeoutMs: PACK_TIMEOUT_MS,
    signal: anySignal([signal, tooBig.signal]),
    maxOutputBytes: MAX_MESSAGE_BYTES,
    onStdout: (chunk) => {
      size += chunk.length;
      if (size > MAX_ARCHIVE_BYTES) tooBig.abort();
      else chunks.push(chunk);
    },
  }).catch((error: unknown) => {
    throw new ProviderPermanentError('vercel', 'importTree', 'cannot pack the local tree', { cause: error, context: { from: dir } });
  });
  if (tooBig.signal.aborted) {
    throw new ProviderPermanentError('vercel', 'importTree', `cannot pack the local tree: the archive exceeds ${MAX_ARCHIVE_BYTES} bytes`, { context: { from: dir, maxBytes: MAX_ARCHIVE_BYTES } });
  }
  if (result.timedOut || result.aborted) {
    throw new ProviderBusyError('vercel', 'importTree', 'packing the local tree timed out', { ...(signal.aborted ? { cause: signal.reason } : {}), context: { from: dir } });
  }
  if (result.exitCode !== 0) {
    throw new ProviderPermanentError('vercel', 'importTree', 'cannot pack the local tree', {
      context: { from: dir, exitCode: result.exitCode, signal: result.signal, stderr: result.stderr.trim() },
    });
  }
  return Buffer.concat(chunks);
}
