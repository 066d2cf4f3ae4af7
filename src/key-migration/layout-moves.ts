/**
 * What `fleet redis migrate-keys` moves between two key layouts, as pure data: the keys of one
 * workspace's own state (each moves whole), and the indexes whose entries move one by one to the
 * bucket of the workspace (or uid) they name. Nothing here touches Redis.
 */
import type { FleetKeys } from '../keys.js';
import type { UidRange } from '../config.js';
import { uidShare } from '../state/sandbox-uid-store.js';

/** Builders of the keys holding one workspace's own state (a key each; test/unit/layout-moves.test.ts checks none is missing). */
export const WORKSPACE_KEY_BUILDERS = [
  'address',
  'generation',
  'runtime',
  'persistIntent',
  'persistStatus',
  'activity',
  'quotaUsage',
  'checkpoints',
  'head',
  'attached',
  'attachSeq',
  'checkpointIndex',
  'sandboxUid',
] as const satisfies readonly (keyof FleetKeys)[];

export interface KeyMove {
  readonly from: string;
  readonly to: string;
}

/** The moves of one workspace's keys, and of its checkpoint records (ids from its checkpoints set); keys that do not change are left out. */
export function workspaceMoves(from: FleetKeys, to: FleetKeys, workspaceId: string, checkpointIds: readonly string[]): KeyMove[] {
  const moves: KeyMove[] = WORKSPACE_KEY_BUILDERS.map((name) => ({ from: from[name](workspaceId), to: to[name](workspaceId) }));
  for (const id of checkpointIds) moves.push({ from: from.checkpoint(from.bucket(workspaceId), id), to: to.checkpoint(to.bucket(workspaceId), id) });
  return moves.filter((move) => move.from !== move.to);
}

/** How an index's entries are read and written, and which workspace (or uid share) each belongs to. */
export interface IndexKind {
  readonly name: 'workspaces' | 'pendingCreates' | 'overQuota' | 'unattached' | 'migrated' | 'sandboxUidOwners';
  readonly type: 'zset' | 'hash';
  /** The index key of a bucket. */
  key(keys: FleetKeys, bucket: number): string;
  /** The bucket an entry (zset member or hash field) goes to under `to`; null when it cannot be placed (left where it is, and reported). */
  target(to: FleetKeys, entry: string, context: IndexContext): number | null;
}

export interface IndexContext {
  readonly uidRange: UidRange;
  /** The workspace of a checkpoint id (from the checkpoint records). */
  readonly checkpointOwner: (checkpointId: string) => string | null;
}

const byWorkspace = (to: FleetKeys, ws: string | null) => (ws && /^[A-Za-z0-9_-]{1,128}$/.test(ws) ? to.bucket(ws) : null);

export const INDEX_KINDS: readonly IndexKind[] = [
  { name: 'workspaces', type: 'zset', key: (k, b) => k.workspaces(b), target: (to, ws) => byWorkspace(to, ws) },
  { name: 'pendingCreates', type: 'zset', key: (k, b) => k.pendingCreates(b), target: (to, member) => byWorkspace(to, member.slice(0, member.lastIndexOf(':g'))) },
  { name: 'overQuota', type: 'zset', key: (k, b) => k.overQuota(b), target: (to, ws) => byWorkspace(to, ws) },
  { name: 'unattached', type: 'zset', key: (k, b) => k.unattached(b), target: (to, id, ctx) => byWorkspace(to, ctx.checkpointOwner(id)) },
  { name: 'migrated', type: 'hash', key: (k, b) => k.migrated(b), target: (to, ws) => byWorkspace(to, ws) },
  {
    name: 'sandboxUidOwners',
    type: 'hash',
    key: (k, b) => k.sandboxUidOwners(b),
    target: (to, uid, ctx) => (/^\d+$/.test(uid) ? uidShare(ctx.uidRange, to.buckets, Number(uid)) : null),
  },
];
