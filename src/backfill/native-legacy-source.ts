/**
 * Provider-native snapshots as a legacy store. The snapshot of a workspace is the newest
 * `provider_native` checkpoint the checkpoint store holds for it (its `workspaceRevision` is the
 * snapshot id; its `providerRef`, when it names a provider, says which one). Opening a
 * workspace restores the snapshot into a scratch incarnation under a throwaway workspace id
 * (never the workspace's own id: that would replace its live tree), exports the tree with
 * `openTree`, and `close()` destroys the scratch incarnation. A scratch incarnation left by a
 * crash is never published, so orphan GC destroys it once it is older than the provision
 * deadline.
 *
 * Candidates are the fleet's known workspaces (those without a native checkpoint open as
 * `null`). Symlinks and special files of the snapshot are skipped and reported.
 */
import { randomBytes } from 'node:crypto';
import { absoluteBytes, encodePath, walkTree } from '../archive/tree-walk.js';
import type { ProviderRegistry } from '../providers/provider-registry.js';
import type { ProviderName } from '../providers/sandbox-provider.js';
import type { CheckpointStore } from '../state/checkpoint-store.js';
import { cachedListing } from './cached-listing.js';
import { FsLegacyWorkspace } from './fs-legacy-workspace.js';
import { pageOf, type LegacyFile, type LegacyListing, type LegacySource, type LegacyWorkspace, type SkippedEntry, type WorkspacePage } from './legacy-source.js';

export interface NativeLegacySourceOptions {
  readonly checkpoints: CheckpointStore;
  readonly providers: ProviderRegistry;
  /** Provider of snapshots whose checkpoint does not name one. */
  readonly defaultProvider: ProviderName;
  readonly hostId: string;
  /** Every workspace the fleet knows (candidates of a sweep). */
  knownWorkspaces(): Promise<string[]>;
  /** Deadline of destroying the scratch incarnation. @default 60000 */
  readonly destroyTimeoutMs?: number;
}

/** Id of a scratch incarnation: valid as a workspace id, never a real workspace's. */
export function scratchWorkspaceId(): string {
  return `backfill-scratch-${randomBytes(6).toString('hex')}`;
}

/** Lists an exported snapshot tree (regular files only; nothing followed). */
async function listTree(root: string): Promise<LegacyListing> {
  const files: LegacyFile[] = [];
  const skipped: SkippedEntry[] = [];
  for await (const entry of walkTree(root)) {
    const path = encodePath(entry.rel);
    if (entry.type === 'file') files.push({ rel: entry.rel, path, size: entry.size, mode: entry.mode & 0o777, mtimeMs: entry.mtimeMs });
    else if (entry.type === 'symlink') skipped.push({ name: path, reason: 'symlink' });
    else if (entry.type !== 'dir') skipped.push({ name: path, reason: 'not-a-file', detail: entry.type });
  }
  files.sort((a, b) => Buffer.compare(a.rel, b.rel));
  return { files, skipped };
}

export class NativeLegacySource implements LegacySource {
  readonly name = 'native' as const;

  readonly #ids: (fresh: boolean) => Promise<readonly string[]>;

  constructor(private readonly options: NativeLegacySourceOptions) {
    this.#ids = cachedListing(() => options.knownWorkspaces());
  }

  async listWorkspaces({ after, limit }: { after: string | null; limit: number }): Promise<WorkspacePage> {
    return pageOf(await this.#ids(after === null), after, limit);
  }

  async openWorkspace(workspaceId: string, signal: AbortSignal): Promise<LegacyWorkspace | null> {
    const { checkpoints, providers, defaultProvider, hostId } = this.options;
    const snapshot = (await checkpoints.history(workspaceId)).find((c) => c.kind === 'provider_native');
    if (!snapshot) return null;
    const named = snapshot.providerRef;
    const provider = providers.get(named === 'local' || named === 'vercel' ? named : defaultProvider);
    const created = await provider.create({
      workspaceId: scratchWorkspaceId(),
      generation: 1,
      hostId,
      source: { type: 'workspace-snapshot', snapshotId: snapshot.workspaceRevision },
      signal,
    });
    const destroy = () => provider.destroy(created.handle, AbortSignal.timeout(this.options.destroyTimeoutMs ?? 60_000));
    let tree;
    try {
      tree = await provider.openTree(created.handle, signal);
    } catch (error) {
      await destroy().catch(() => undefined);
      throw error;
    }
    const root = tree.path;
    return new FsLegacyWorkspace({
      workspaceId,
      origin: `${provider.name} snapshot ${snapshot.workspaceRevision}`,
      list: () => listTree(root),
      locate: (file) => absoluteBytes(root, file.rel),
      close: async () => {
        try {
          await tree.release();
        } finally {
          await destroy();
        }
      },
    });
  }
}
