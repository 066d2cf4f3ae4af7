/** `get` and `list`: the incarnations recorded in this host's live directories. */
import { lstat, readdir } from 'node:fs/promises';
import type { SandboxInfo } from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';
import { handlePaths, type LocalHost } from './handle-paths.js';
import { livePaths } from './live-paths.js';
import { readSandboxMeta, type SandboxMeta } from './sandbox-meta.js';

// The provider-neutral view of a recorded incarnation.
function infoOf(meta: SandboxMeta): SandboxInfo {
  return { handle: meta.handle, workspaceId: meta.workspaceId, generation: meta.generation, hostId: meta.hostId, state: meta.state, createdAt: meta.createdAt };
}

/** The incarnation named by `handle`; null unless it is the one living here with a real tree. */
export async function getSandbox(host: LocalHost, handle: string): Promise<SandboxInfo | null> {
  const { paths } = handlePaths(host, handle, 'get');
  try {
    const meta = await readSandboxMeta(paths);
    if (!meta || meta.handle !== handle) return null;
    const root = await lstat(paths.root).catch(() => null);
    if (!root?.isDirectory()) return null;
    return infoOf(meta);
  } catch (error) {
    throw classifyFsError(error, 'get');
  }
}

/** Every incarnation of this host (a directory whose meta is unreadable is skipped). */
export async function listSandboxes(host: LocalHost): Promise<SandboxInfo[]> {
  let names: string[];
  try {
    names = await readdir(host.liveRoot);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw classifyFsError(error, 'list');
  }
  const out: SandboxInfo[] = [];
  for (const name of names) {
    const meta = await readSandboxMeta(livePaths(host.liveRoot, name)).catch(() => null);
    if (meta && meta.hostId === host.hostId) out.push(infoOf(meta));
  }
  return out;
}
