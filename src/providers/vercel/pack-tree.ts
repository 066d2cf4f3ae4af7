import { execa } from 'execa';

// The SDK uploads from memory (tar-stream into one buffer), so the archive must fit there too.
const MAX_ARCHIVE_BYTES = 1024 ** 3;
// A local tar of a workspace that takes longer than this is stuck, not slow.
const PACK_TIMEOUT_MS = 10 * 60_000;

/**
 * Archives a local directory (gzip, pax format, symlinks as symlinks, hard links as files) for
 * `importTree`. Runs the host's `tar`, which the fleet requires anyway.
 */
export async function packTree(dir: string, signal: AbortSignal): Promise<Buffer> {
  const result = await execa('tar', ['-czf', '-', '--format=posix', '--hard-dereference', '-C', dir, '.'], {
    encoding: 'buffer',
    stripFinalNewline: false,
    maxBuffer: MAX_ARCHIVE_BYTES,
    timeout: PACK_TIMEOUT_MS,
    cancelSignal: signal,
  });
  return Buffer.from(result.stdout);
}
