import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { ProviderPermanentError } from '../provider-errors.js';
import type { TreeSource } from '../sandbox-provider.js';
import { classifyFsError } from './classify-fs-error.js';
import type { LocalHost } from './handle-paths.js';
import { ownSandbox } from './own-sandbox.js';

/** `openTree`: the live tree itself, for persist; its stat cache sits in the meta directory, outside the sandbox's view. */
export async function openLiveTree(host: LocalHost, handle: string): Promise<TreeSource> {
  const { paths } = await ownSandbox(host, handle, 'openTree');
  const stats = await lstat(paths.root).catch((e: unknown) => {
    throw classifyFsError(e, 'openTree');
  });
  // The root itself must be a real directory: a symlinked root would make rsync read elsewhere.
  if (!stats.isDirectory()) throw new ProviderPermanentError('local', 'openTree', `${paths.root} is not a real directory`);
  return { path: paths.root, statCache: path.join(paths.meta, 'stat-cache.json'), release: async () => undefined };
}
