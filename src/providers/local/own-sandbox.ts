import { ProviderGoneError } from '../provider-errors.js';
import { classifyFsError } from './classify-fs-error.js';
import { handlePaths, type LocalHost } from './handle-paths.js';
import type { LivePaths } from './live-paths.js';
import { readSandboxMeta, type SandboxMeta } from './sandbox-meta.js';

/** The meta of `handle` when it is the incarnation living here; throws gone otherwise. */
export async function ownSandbox(host: LocalHost, handle: string, operation: string): Promise<{ paths: LivePaths; meta: SandboxMeta }> {
  const { paths } = handlePaths(host, handle, operation);
  const meta = await readSandboxMeta(paths).catch((e: unknown) => {
    throw classifyFsError(e, operation);
  });
  if (!meta || meta.handle !== handle) throw new ProviderGoneError('local', operation, `sandbox ${handle} does not exist on this host`);
  return { paths, meta };
}
