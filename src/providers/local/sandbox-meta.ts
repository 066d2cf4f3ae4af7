/**
 * `meta/sandbox.json`: the incarnation living in a live directory (live-paths.ts). Written only
 * by the fleet, under the workspace lock, outside the tree the sandbox can change.
 */
import { readFile } from 'node:fs/promises';
import type { LivePaths } from './live-paths.js';
import { writeDurable } from './write-durable.js';

export interface SandboxMeta {
  readonly handle: string;
  readonly workspaceId: string;
  readonly generation: number;
  readonly hostId: string;
  state: 'running' | 'stopped';
  readonly createdAt: number;
  /** The sandbox uid owning the live tree; absent for a tree made without isolation. */
  uid?: number;
}

/** The recorded incarnation; null when none lives here. */
export async function readSandboxMeta(paths: LivePaths): Promise<SandboxMeta | null> {
  try {
    return JSON.parse(await readFile(paths.sandbox, 'utf8')) as SandboxMeta;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Records `meta` as the incarnation living here (atomic and durable). */
export async function writeSandboxMeta(paths: LivePaths, meta: SandboxMeta): Promise<void> {
  await writeDurable(paths.sandbox, JSON.stringify(meta));
}
