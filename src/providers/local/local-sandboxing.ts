import type { Isolation } from '../../sandbox/isolation.js';

/** How the provider contains commands, and the uid of each workspace. */
export interface LocalSandboxing {
  /** The isolation of this process (decided once, at start-up; see prepare-isolation.ts). */
  isolation(): Promise<Isolation>;
  /** The workspace's uid (allocated once, fleet-wide; see sandbox-uid-store.ts). */
  uidFor(workspaceId: string): Promise<number>;
}

/** The uid a workspace's tree must belong to under the current isolation (undefined: none). */
export async function treeUidFor(sandboxing: LocalSandboxing, workspaceId: string): Promise<number | undefined> {
  if ((await sandboxing.isolation()).mode === 'none') return undefined;
  return sandboxing.uidFor(workspaceId);
}
