import { randomUUID } from 'node:crypto';
import type { Sandbox } from '@vercel/sandbox';
import { UnsafeListingError } from '../../errors/unsafe-listing-error.js';
import type { TreeLimits } from '../../tree/tree-limits.js';
import { parseListing, type ListedEntry } from './parse-listing.js';
import { gunzipBounded, readSandboxFile, type SandboxFileStream } from './read-sandbox-file.js';
import { runScript } from './run-script.js';
import { DELTA_SCRIPT } from './tree-scripts.js';
import { FLEET_DIR, sandboxPath } from './vercel-paths.js';

export interface FetchedDelta {
  /** The sandbox's clock (ns) just before the archive was made (the racily-clean rule). */
  readonly clockNs: bigint;
  /** The sandbox's second look at the files asked for, by key. */
  readonly restat: ReadonlyMap<string, ListedEntry>;
  /** The compressed archive of the files, as it streams back. */
  readonly archive: SandboxFileStream;
  /** Bytes sent (the list of paths) and received on stdout (the second look). */
  readonly requestBytes: number;
  readonly restatBytes: number;
  /** Transfer files left in the sandbox (removed by the caller). */
  readonly files: readonly string[];
}

const DOT_SLASH = Buffer.from('./');
const NUL = Buffer.of(0);
// stdout of DELTA_SCRIPT: the clock, then base64 of the gzipped second look.
const DELTA_STDOUT = /^(\d{1,20})\n([A-Za-z0-9+/]*={0,2})\n$/;

/**
 * Has the sandbox archive exactly the files in `wanted` (`DELTA_SCRIPT`): the list of their paths
 * goes up as one small file, the archive comes back through the SDK's file read.
 */
export async function fetchDelta(sandbox: Sandbox, wanted: readonly ListedEntry[], limits: TreeLimits, signal: AbortSignal): Promise<FetchedDelta> {
  const id = randomUUID();
  const request = `${FLEET_DIR}/want-${id}`;
  const archive = `${FLEET_DIR}/delta-${id}.tgz`;
  const paths = Buffer.concat(wanted.flatMap((entry) => [DOT_SLASH, entry.rel, NUL]));
  await sandbox.writeFiles([{ path: sandboxPath(request), content: paths, mode: 0o600 }], { signal });
  const ran = await runScript(sandbox, { operation: 'openTree', script: DELTA_SCRIPT, args: [request, archive], signal });
  const stdout = await ran.stdout();
  const match = DELTA_STDOUT.exec(stdout);
  if (!match) throw new UnsafeListingError('the delta script printed something else than a clock and a listing', Buffer.from(stdout.slice(0, 200)));
  const packed = Buffer.from(match[2]!, 'base64');
  const tooLarge = () => new UnsafeListingError('the second look is larger than a listing of the files asked for can be', Buffer.alloc(0));
  // Each record is at most a fields line, a path within the limits and a NUL-free target.
  const maxBytes = wanted.length * (limits.maxPathBytes + 4_400);
  const restat = (await parseListing(gunzipBounded(oneChunk(packed), maxBytes, tooLarge), { limits, requireParents: false })).entries;
  return { clockNs: BigInt(match[1]!), restat, archive: await readSandboxFile(sandbox, archive, 'openTree', signal), requestBytes: paths.length, restatBytes: stdout.length, files: [request, archive] };
}

async function* oneChunk(buffer: Buffer): AsyncGenerator<Buffer> {
  yield buffer;
}
