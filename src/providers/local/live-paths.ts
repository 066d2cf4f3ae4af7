/**
 * Layout of the local provider on a host:
 *
 *   {liveRoot}/{workspaceId}/root/              the live tree (mode 0700); what the archive stores
 *   {liveRoot}/{workspaceId}/meta/sandbox.json  the incarnation living here (handle, generation, state)
 *   {liveRoot}/{workspaceId}/meta/ready.json    ready marker: written only after a complete restore
 *   {liveRoot}/{workspaceId}/staging-*          trees being built (never used by persist)
 */
import path from 'node:path';

export interface LivePaths {
  readonly dir: string;
  readonly root: string;
  readonly meta: string;
  readonly sandbox: string;
  readonly ready: string;
  staging(tag: string): string;
}

export function livePaths(liveRoot: string, workspaceId: string): LivePaths {
  const dir = path.join(liveRoot, workspaceId);
  const meta = path.join(dir, 'meta');
  return {
    dir,
    root: path.join(dir, 'root'),
    meta,
    sandbox: path.join(meta, 'sandbox.json'),
    ready: path.join(meta, 'ready.json'),
    staging: (tag) => path.join(dir, `staging-${tag}`),
  };
}

/** Handles of local incarnations: `local:<hostId>:<workspaceId>:g<generation>`. */
export function localHandle(hostId: string, workspaceId: string, generation: number): string {
  return `local:${hostId}:${workspaceId}:g${generation}`;
}

export function parseLocalHandle(handle: string): { hostId: string; workspaceId: string; generation: number } | null {
  const match = /^local:([A-Za-z0-9_-]{1,64}):([A-Za-z0-9_-]{1,128}):g(\d+)$/.exec(handle);
  return match ? { hostId: match[1]!, workspaceId: match[2]!, generation: Number(match[3]) } : null;
}
