/**
 * Migration state of the legacy backfill: `keys.migrated()` is a hash workspace → JSON record
 * written once (HSETNX) when everything the legacy store holds for the workspace is in the
 * archive. From then on the archive is authoritative for that workspace: the app's dual read
 * stops consulting the legacy store (so a file deleted in the archive stays deleted).
 */
import type { RedisClient } from '../redis.js';
import type { FleetKeys } from '../keys.js';
import { groupBy, sumOverBuckets } from './buckets.js';

export interface MigrationRecord {
  /** Epoch ms of the migration. */
  readonly at: number;
  /** Legacy files this migration copied into the archive. */
  readonly files: number;
  /** Bytes of those files. */
  readonly bytes: number;
  readonly source: 'blob' | 'native';
  /** Revision that holds the copied files (the current one when nothing was copied). */
  readonly revision: string | null;
  /** Legacy files the archive already had (the archive won). */
  readonly archived: number;
  /** Legacy entries refused (symlinks, special files, hostile names) and paths in conflict. */
  readonly skipped: number;
  readonly conflicts: number;
}

/** Whether a workspace is migrated (for callers holding only a connection and the key set, not the store). */
export async function isMigrated(redis: Pick<RedisClient, 'hexists'>, keys: Pick<FleetKeys, 'migrated' | 'bucket'>, workspaceId: string): Promise<boolean> {
  return (await redis.hexists(keys.migrated(keys.bucket(workspaceId)), workspaceId)) === 1;
}

export class MigrationStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: FleetKeys,
  ) {}

  async isMigrated(workspaceId: string): Promise<boolean> {
    return isMigrated(this.redis, this.keys, workspaceId);
  }

  /** Which of `workspaceIds` are migrated. */
  async migratedAmong(workspaceIds: readonly string[]): Promise<Set<string>> {
    if (workspaceIds.length === 0) return new Set();
    const migrated = new Set<string>();
    await Promise.all(
      [...groupBy(workspaceIds, (ws) => this.keys.bucket(ws))].map(async ([b, ids]) => {
        const values = await this.redis.hmget(this.keys.migrated(b), ...ids);
        ids.forEach((ws, i) => values[i] !== null && migrated.add(ws));
      }),
    );
    return migrated;
  }

  /** Records the migration once; returns false when it was already recorded (nothing changes). */
  async mark(workspaceId: string, record: MigrationRecord): Promise<boolean> {
    return (await this.redis.hsetnx(this.keys.migrated(this.keys.bucket(workspaceId)), workspaceId, JSON.stringify(record))) === 1;
  }

  async get(workspaceId: string): Promise<MigrationRecord | null> {
    const raw = await this.redis.hget(this.keys.migrated(this.keys.bucket(workspaceId)), workspaceId);
    return raw ? (JSON.parse(raw) as MigrationRecord) : null;
  }

  async count(): Promise<number> {
    return sumOverBuckets(this.keys, (b) => this.redis.hlen(this.keys.migrated(b)));
  }
}
