import { ProviderGoneError, ProviderPermanentError } from '../provider-errors.js';
import { livePaths, parseLocalHandle, type LivePaths } from './live-paths.js';

/** Where this host keeps its live directories. */
export interface LocalHost {
  readonly hostId: string;
  readonly liveRoot: string;
}

/** Paths of a handle that must live on this host (permanent when malformed, gone when it lives elsewhere). */
export function handlePaths(host: LocalHost, handle: string, operation: string): { paths: LivePaths; workspaceId: string; generation: number } {
  const parsed = parseLocalHandle(handle);
  if (!parsed) throw new ProviderPermanentError('local', operation, `not a local handle: ${JSON.stringify(handle)}`);
  if (parsed.hostId !== host.hostId) {
    throw new ProviderGoneError('local', operation, `handle ${handle} lives on host ${parsed.hostId}, not on ${host.hostId}`);
  }
  return { paths: livePaths(host.liveRoot, parsed.workspaceId), workspaceId: parsed.workspaceId, generation: parsed.generation };
}
